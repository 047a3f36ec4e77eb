package templates

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// A parse error quotes the faulty placeholder cut on a character
// boundary: a multi-byte character across the 40-byte limit is dropped
// whole.
func TestParseErrorExcerptKeepsCharactersWhole(t *testing.T) {
	t.Parallel()
	for _, char := range []string{"é", "计", "🙂"} {
		head := "{{KEY:" + strings.Repeat("A", 40-len("{{KEY:")-1)
		_, err := Parse("x", "--- user ---\n"+head+strings.Repeat(char, 5))
		if err == nil {
			t.Fatalf("%q: Parse accepted an unterminated placeholder", char)
		}
		if msg := err.Error(); !utf8.ValidString(msg) || !strings.Contains(msg, head+"…") {
			t.Errorf("%q: error %q, want valid UTF-8 quoting %q", char, msg, head+"…")
		}
	}
}
