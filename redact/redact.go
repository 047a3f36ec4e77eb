// Package redact is twostep's one secret scrubber. A Redactor knows every
// configured secret (connection credentials, LLM API keys, gateway
// tokens) and replaces each one, in every form a service might echo it
// in, with Redacted: plain; JSON-escaped (with and without HTML escaping,
// with "/" escaped as "\/" the way PHP's json_encode does, and fully
// \uXXXX-escaped in either hex case); URL-encoded (query and path
// escaping); base64 (standard and URL alphabets, padded and raw); hex
// (either case). Beyond those fixed forms it finds the secret in any case
// and in any mix of JSON escapes, HTML character references and
// percent-encoded ASCII (see mixedMatcher). SECURITY.md lists what is and
// is not caught.
//
// It is applied once, to an action's output before the output becomes a
// message, a document, a prompt or a trace, so a trace shows exactly what
// the model received; the trace store and the log writer apply it again
// as a safety net. Secrets shorter than MinSecretLen are refused by
// configuration: they cannot be told apart from ordinary text.
package redact

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"unicode/utf8"
)

// Redacted replaces every form of every secret.
const Redacted = "[REDACTED]"

// MinSecretLen is the shortest secret configuration accepts (DESIGN §9.7).
const MinSecretLen = 8

// CheckSecret returns why value cannot be a secret ("" when it can): it
// is too short to be told apart from ordinary text once redacted.
func CheckSecret(value string) string {
	if n := utf8.RuneCountInString(strings.TrimSpace(value)); n < MinSecretLen {
		return fmt.Sprintf("is %d characters long; secrets must have at least %d", n, MinSecretLen)
	}
	return ""
}

// Redactor replaces known secrets. It is immutable and safe for concurrent
// use; the nil *Redactor redacts nothing.
type Redactor struct {
	replacer *strings.Replacer
	forms    []string // every form of every secret, longest first
	// needles are the forms, lower-cased, that hold no other: text holds
	// some form in some ASCII case exactly when it holds some needle in
	// some case, so Contains looks for these only (a padded base64 form,
	// say, is found through its raw prefix). Matching every form in any
	// case costs nothing more than matching them exactly, finds the
	// secret upper- or lower-cased, and a base64 form that matches only in
	// another case (a false alarm at worst) is vanishingly unlikely.
	needles []string
	scan    *scanner // finds the needles in any ASCII case
	// mixed finds each secret in any case and any mix of escapes (see
	// mixedMatcher).
	mixed *mixedMatcher
}

// New returns a Redactor for secrets. Empty values are ignored; values
// shorter than MinSecretLen are matched too (configuration refuses them,
// but a key from the environment is still scrubbed rather than leaked).
func New(secrets ...string) *Redactor {
	var forms, plain []string
	for _, s := range secrets {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		forms = append(forms, Forms(s)...)
		plain = append(plain, s)
	}
	// Longest first, so a form that contains another is replaced whole.
	slices.SortFunc(forms, func(a, b string) int {
		if c := cmp.Compare(len(b), len(a)); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	forms = slices.Compact(forms)
	pairs := make([]string, 0, 2*len(forms))
	for _, f := range forms {
		pairs = append(pairs, f, Redacted)
	}
	r := &Redactor{replacer: strings.NewReplacer(pairs...), forms: forms, mixed: newMixedMatcher(plain)}
	lower := make([]string, len(forms))
	for i, f := range forms {
		lower[i] = lowerASCII(f)
	}
	slices.Sort(lower)
	lower = slices.Compact(lower)
	for _, f := range lower {
		if !slices.ContainsFunc(lower, func(g string) bool { return g != f && strings.Contains(f, g) }) {
			r.needles = append(r.needles, f)
		}
	}
	r.scan = newScannerSkipping(r.needles, minWindow, true)
	return r
}

// Forms returns every fixed form of secret the Redactor matches, without
// duplicates (the mixed forms are found by decoding, see mixedMatcher).
func Forms(secret string) []string {
	forms := []string{secret}
	add := func(f string) {
		if f != "" && !slices.Contains(forms, f) {
			forms = append(forms, f)
		}
	}
	for _, j := range jsonForms(secret) {
		add(j)
		add(strings.ReplaceAll(j, "/", `\/`))
	}
	add(unicodeEscaped(secret, "\\u%04x"))
	add(unicodeEscaped(secret, "\\u%04X"))
	add(url.QueryEscape(secret))
	add(url.PathEscape(secret))
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		add(enc.EncodeToString([]byte(secret)))
	}
	add(hex.EncodeToString([]byte(secret)))
	add(strings.ToUpper(hex.EncodeToString([]byte(secret))))
	return forms
}

// jsonForms returns secret as it appears inside a JSON string, with and
// without HTML escaping (encoding/json escapes <, > and & by default).
func jsonForms(secret string) []string {
	var out []string
	for _, html := range []bool{true, false} {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		if enc.Encode(secret) == nil {
			q := strings.TrimSuffix(b.String(), "\n")
			out = append(out, q[1:len(q)-1])
		}
	}
	return out
}

// unicodeEscaped writes every UTF-16 code unit of s as a \uXXXX escape.
func unicodeEscaped(s, format string) string {
	var b strings.Builder
	for _, r := range s {
		if r > 0xFFFF {
			r1, r2 := utf16Pair(r)
			fmt.Fprintf(&b, format+format, r1, r2)
			continue
		}
		fmt.Fprintf(&b, format, r)
	}
	return b.String()
}

func utf16Pair(r rune) (rune, rune) {
	r -= 0x10000
	return 0xD800 + (r>>10)&0x3FF, 0xDC00 + r&0x3FF
}

// Empty reports whether r knows no secret.
func (r *Redactor) Empty() bool { return r == nil || len(r.forms) == 0 }

// String returns s with every form of every secret replaced; s itself
// (no copy) when it holds none.
func (r *Redactor) String(s string) string {
	if !r.Contains(s) {
		return s
	}
	s = r.replacer.Replace(s)
	s, _ = r.mixed.replace(s)
	return s
}

// Bytes returns b with every secret replaced; b itself when it holds none.
func (r *Redactor) Bytes(b []byte) []byte {
	if !r.ContainsBytes(b) {
		return b
	}
	return []byte(r.String(string(b)))
}

// Contains reports whether s holds any form of any secret.
func (r *Redactor) Contains(s string) bool {
	if r.Empty() {
		return false
	}
	if scan(r.scan, s) {
		return true
	}
	return containsEscaped(r.mixed, s, func(c byte, from int) int {
		if i := strings.IndexByte(s[from:], c); i >= 0 {
			return from + i
		}
		return -1
	})
}

// ContainsBytes is Contains for bytes.
func (r *Redactor) ContainsBytes(b []byte) bool {
	if r.Empty() {
		return false
	}
	if scan(r.scan, b) {
		return true
	}
	return containsEscaped(r.mixed, b, func(c byte, from int) int {
		if i := bytes.IndexByte(b[from:], c); i >= 0 {
			return from + i
		}
		return -1
	})
}

// JSON returns raw with every secret replaced; raw itself (no copy) when
// it holds none. Redacted is valid inside a JSON string, so valid JSON
// stays valid.
func (r *Redactor) JSON(raw json.RawMessage) json.RawMessage {
	if !r.ContainsBytes(raw) {
		return raw
	}
	return json.RawMessage(r.String(string(raw)))
}

// Writer returns an io.Writer that redacts each write with the Redactor
// current at the time of the write (see Swap), for log output: a log line
// is written in one Write, so no secret is split across writes.
func Writer(w io.Writer, current *atomic.Pointer[Redactor]) io.Writer {
	return &writer{w: w, r: current}
}

type writer struct {
	w io.Writer
	r *atomic.Pointer[Redactor]
}

// Write writes p redacted and reports len(p) written when it all went out,
// so callers see no short write for a line that was shortened.
func (w *writer) Write(p []byte) (int, error) {
	out := w.r.Load().Bytes(p)
	if _, err := w.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}
