package redact

import (
	"encoding/json"
	"fmt"
	"html"
	"strings"
	"testing"
)

// TestMixedForms: every form the security probe found leaking, and the
// mixes around them, is replaced whole, and the text around it is kept.
func TestMixedForms(t *testing.T) {
	t.Parallel()
	const secret = `conn/"MARKER"+9d41e7b2`
	partial := func(every int) string { // .NET's encoder: some characters \u-escaped
		var b strings.Builder
		for i, c := range secret {
			if i%every == 0 || c == '"' {
				fmt.Fprintf(&b, `\u%04X`, c)
				continue
			}
			b.WriteRune(c)
		}
		return b.String()
	}
	entities := func(hexRefs bool) string {
		var b strings.Builder
		for i, c := range secret {
			switch {
			case i%2 == 0 && hexRefs:
				fmt.Fprintf(&b, "&#x%x;", c)
			case i%2 == 0:
				fmt.Fprintf(&b, "&#%d;", c)
			default:
				b.WriteString(html.EscapeString(string(c)))
			}
		}
		return b.String()
	}
	upperJSON, _ := json.Marshal(strings.ToUpper(secret))
	entitiesJSON, _ := json.Marshal(entities(true)) // & written as \u0026
	// twice JSON-encodes a form again, as a log line holds it.
	twice := func(form string) string {
		q, _ := json.Marshal(form)
		return string(q[1 : len(q)-1])
	}
	for _, tt := range []struct{ name, form string }{
		{"upper case", strings.ToUpper(secret)},
		{"lower case", strings.ToLower(secret)},
		{"upper case, JSON-escaped", string(upperJSON[1 : len(upperJSON)-1])},
		{"every other character \\u-escaped", partial(2)},
		{"every third \\u-escaped", partial(3)},
		{"hex", fmt.Sprintf("%x", secret)},
		{"HEX", fmt.Sprintf("%X", secret)},
		{"HTML escaped", html.EscapeString(secret)},
		{"decimal references", entities(false)},
		{"hex references", entities(true)},
		{"hex references inside JSON", string(entitiesJSON[1 : len(entitiesJSON)-1])},
		{"partly \\u-escaped, then JSON-encoded again", twice(partial(2))},
		{"JSON-escaped, then JSON-encoded again", twice(twice(secret))},
		{"upper case, three levels of JSON", twice(twice(twice(strings.ToUpper(secret))))},
		{"upper case, percent-encoded in part", strings.ReplaceAll(strings.ToUpper(secret), "/", "%2f")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := New(secret)
			text := `{"echo":"` + tt.form + `","n":1}`
			if !r.Contains(text) || !r.ContainsBytes([]byte(text)) {
				t.Fatalf("Contains(%q) = false", text)
			}
			if got, want := r.String(text), `{"echo":"`+Redacted+`","n":1}`; got != want {
				t.Errorf("String(%q) = %q, want %q", text, got, want)
			}
			if got := string(r.Bytes([]byte(text))); strings.Contains(got, "9d41") || strings.Contains(got, "9D41") {
				t.Errorf("Bytes(%q) = %q", text, got)
			}
		})
	}
}

// TestMixedFormsLeaveOtherTextAlone: near misses and escapes that spell
// something else are not touched.
func TestMixedFormsLeaveOtherTextAlone(t *testing.T) {
	t.Parallel()
	r := New("sk-live-1234")
	for _, text := range []string{
		`sk-live-123`, `sk-live-1235`, `sk\u002dlive-123`, `&amp;sk-live-12&#51;`,
		`\u`, `\uZZZZ`, `&#;`, `&#x;`, `&#99999999999;`, `%`, `%G1`, `\ud800`, strings.Repeat(`\`, 100),
	} {
		if r.Contains(text) || r.String(text) != text {
			t.Errorf("%q: Contains %v, String %q", text, r.Contains(text), r.String(text))
		}
	}
	if got := r.String(`x sk-live%2d1234 y`); got != "x "+Redacted+" y" {
		t.Errorf("percent-encoded dash: %q", got)
	}
}

// TestMixedFormsNonASCII: case folding and surrogate pairs in a secret
// beyond ASCII.
func TestMixedFormsNonASCII(t *testing.T) {
	t.Parallel()
	const secret = "naïve-секрет-😀-9"
	r := New(secret)
	q, _ := json.Marshal(strings.ToUpper(secret))
	for _, text := range []string{strings.ToUpper(secret), `naïve-\u0441екрет-\ud83d\ude00-9`, string(q)} {
		if r.Contains(text) == false || strings.Contains(r.String(text), "9") {
			t.Errorf("%q not redacted: %q", text, r.String(text))
		}
	}
}

// BenchmarkContainsEscapedText: a 20 kB JSON text dense with escapes and
// HTML references (the windowed search's worst case), one secret absent.
func BenchmarkContainsEscapedText(b *testing.B) {
	r := New("sk-bench-0123456789abcdef")
	text := strings.Repeat(`{\"msg\":\"caf\u00e9 &amp; 50% off\",\"k\":\"sk-bench-01234\"}\n`, 350)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if r.Contains(text) {
			b.Fatal("no secret in the text")
		}
	}
}
