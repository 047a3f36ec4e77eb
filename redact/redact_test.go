package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// TestEveryEchoedFormIsRedacted: a secret with characters every encoder
// escapes is scrubbed however a service echoes it back.
func TestEveryEchoedFormIsRedacted(t *testing.T) {
	t.Parallel()
	const secret = `s3cr"et/k<e>y&+=é`
	r := New(secret, "another-secret-value")
	jsonQuoted, _ := json.Marshal(secret) // HTML-escaped, as encoding/json does by default
	var plainJSON bytes.Buffer
	enc := json.NewEncoder(&plainJSON)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(secret)
	php := strings.ReplaceAll(strings.Trim(strings.TrimSpace(plainJSON.String()), `"`), "/", `\/`)
	echoes := map[string]string{
		"plain":             secret,
		"json":              string(jsonQuoted[1 : len(jsonQuoted)-1]),
		"json, no html":     strings.Trim(strings.TrimSpace(plainJSON.String()), `"`),
		"json, php slashes": php,
		"json, all \\u":     unicodeEscaped(secret, "\\u%04x"),
		"json, all \\U":     unicodeEscaped(secret, "\\u%04X"),
		"url query":         url.QueryEscape(secret),
		"url path":          url.PathEscape(secret),
		"base64":            base64.StdEncoding.EncodeToString([]byte(secret)),
		"base64 url, raw":   base64.RawURLEncoding.EncodeToString([]byte(secret)),
		"second secret":     "another-secret-value",
		"second, as base64": base64.StdEncoding.EncodeToString([]byte("another-secret-value")),
	}
	for name, echo := range echoes {
		body := `{"echo":"` + echo + `","n":1}`
		got := r.String(body)
		if got != `{"echo":"`+Redacted+`","n":1}` {
			t.Errorf("%s: %q redacted to %q", name, body, got)
		}
		if !r.Contains(body) || !r.ContainsBytes([]byte(body)) {
			t.Errorf("%s: Contains misses %q", name, echo)
		}
		if bytes.Contains(r.Bytes([]byte(body)), []byte(echo)) {
			t.Errorf("%s: Bytes kept the echo", name)
		}
	}
	clean := "nothing secret here: s3cr et"
	if r.Contains(clean) || r.String(clean) != clean {
		t.Errorf("clean text changed: %q", r.String(clean))
	}
	var nilR *Redactor
	if nilR.String(clean) != clean || nilR.Contains(secret) {
		t.Error("the nil Redactor redacted something")
	}
}

// TestCheckSecret: configuration refuses secrets under 8 characters.
func TestCheckSecret(t *testing.T) {
	t.Parallel()
	if CheckSecret("1234567") == "" || CheckSecret("  abc  ") == "" {
		t.Error("a short secret was accepted")
	}
	if msg := CheckSecret("12345678"); msg != "" {
		t.Errorf("an 8-character secret was refused: %s", msg)
	}
}

// TestWriterRedactsWithTheCurrentRedactor: log lines written before the
// secrets are known pass unchanged; once swapped in, every line is
// scrubbed, and the caller sees its whole line written.
func TestWriterRedactsWithTheCurrentRedactor(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	var cur atomic.Pointer[Redactor]
	w := Writer(&out, &cur)
	line := []byte(`{"msg":"calling","header":"Bearer tok-ABCDEFGH-1234"}` + "\n")
	if n, err := w.Write(line); err != nil || n != len(line) {
		t.Fatalf("Write = %d, %v", n, err)
	}
	cur.Store(New("tok-ABCDEFGH-1234"))
	if n, err := w.Write(line); err != nil || n != len(line) {
		t.Fatalf("Write = %d, %v", n, err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "tok-ABCDEFGH") || strings.Contains(lines[1], "tok-ABCDEFGH") ||
		!strings.Contains(lines[1], Redacted) {
		t.Errorf("log output:\n%s", out.String())
	}
}

// TestUnicodeEscapedEcho: a secret echoed with every character as a
// \uXXXX escape (as some JSON encoders do) is found, in either hex case.
func TestUnicodeEscapedEcho(t *testing.T) {
	t.Parallel()
	r := New("pass/word-1")
	for _, echo := range []string{
		`\u0070\u0061\u0073\u0073\u002f\u0077\u006f\u0072\u0064\u002d\u0031`,
		`\u0070\u0061\u0073\u0073\u002F\u0077\u006F\u0072\u0064\u002D\u0031`,
		`pass\/word-1`,
	} {
		if got := r.String(`"` + echo + `"`); got != `"`+Redacted+`"` {
			t.Errorf("%s redacted to %s", echo, got)
		}
	}
}
