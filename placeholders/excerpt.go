package placeholders

import (
	"strings"
	"unicode/utf8"
)

// Excerpt returns s on one line (whitespace runs collapsed) cut to at most
// max runes, ending in "…" when it was cut.
func Excerpt(s string, max int) string {
	s = oneLine(s)
	if max <= 0 {
		return ""
	}
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	runes := []rune(s)
	return strings.TrimSpace(string(runes[:max-1])) + "…"
}
