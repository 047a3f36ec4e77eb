package llm

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// An error text a client reads is cut on a character boundary: a
// multi-byte character straddling the limit is dropped whole, never cut in
// half.
func TestErrorTextsAreCutOnCharacterBoundaries(t *testing.T) {
	t.Parallel()
	m := &Model{secrets: []string{testKey}}
	tests := []struct {
		name  string
		clip  func(string) string
		limit int
	}{
		{"redacted cause", func(s string) string { return m.redact(errors.New(s)).Error() }, 500},
		{"provider reason", func(s string) string { return strings.TrimPrefix(providerReason(errors.New(s)), ": ") }, 300},
	}
	for _, tc := range tests {
		for _, char := range []string{"é", "计", "🙂"} {
			for shift := 1; shift < len(char); shift++ {
				// The character starts shift bytes before the limit.
				in := strings.Repeat("a", tc.limit-shift) + strings.Repeat(char, 10)
				got := tc.clip(in)
				if !utf8.ValidString(got) {
					t.Errorf("%s, %q at limit-%d: %q is not valid UTF-8", tc.name, char, shift, got)
				}
				want := strings.Repeat("a", tc.limit-shift) + "…"
				if got != want {
					t.Errorf("%s, %q at limit-%d: got …%q, want …%q", tc.name, char, shift, got[max(len(got)-8, 0):], want[len(want)-8:])
				}
			}
		}
	}
}
