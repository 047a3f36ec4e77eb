package workflow

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Count writes n with its noun in the right number ("1 document",
// "2 documents"); plural is the noun's plural form, or "" to add "s".
// Prompts, summaries and messages all count things the same way.
func Count(n int, singular, plural string) string {
	if n == 1 {
		return "1 " + singular
	}
	if plural == "" {
		plural = singular + "s"
	}
	return strconv.Itoa(n) + " " + plural
}

// OneLine collapses every run of whitespace in s (newlines included) into
// one space and trims it, so a value cannot break the line it is shown on.
func OneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// Clip returns at most n bytes of s, never splitting a UTF-8 sequence,
// followed by "…" when it was cut. It bounds text that quotes model or
// action output in problem lines, reasons and traces; its cost is O(n),
// whatever len(s).
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return CutUTF8(s, n) + "…"
}

// CutUTF8 returns at most n bytes of s without splitting a rune (and
// without an ellipsis): a prefix that is still valid where s was.
func CutUTF8(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
