package workflow

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/twostep/twostep/templates/notices"
)

// Count writes n with its noun in the right number ("1 document",
// "2 documents"); plural is the noun's plural form, or "" to add "s".
// Prompts, summaries and messages all count things the same way: this is
// notices.Count, the one rule.
func Count(n int, singular, plural string) string {
	return notices.Count(n, singular, plural)
}

// OneLine collapses every run of whitespace in s (newlines included) into
// one space and trims it, so a value cannot break the line it is shown on.
func OneLine(s string) string {
	if isOneLine(s) {
		return s // the common case: nothing to collapse, nothing to copy
	}
	var b strings.Builder
	b.Grow(len(s))
	for f := range strings.FieldsSeq(s) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(f)
	}
	return b.String()
}

// isOneLine reports whether OneLine(s) == s: s neither starts nor ends
// with white space and its only white space is single ASCII spaces.
func isOneLine(s string) bool {
	prevSpace := true // a leading space is not one line
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case c == ' ':
				if prevSpace {
					return false
				}
				prevSpace = true
			case asciiSpace(c):
				return false
			default:
				prevSpace = false
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			return false
		}
		i += size
		prevSpace = false
	}
	return !prevSpace || s == ""
}

// asciiSpace reports whether c is ASCII white space (as strings.Fields
// sees it).
func asciiSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
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

// Excerpt returns s on one line (OneLine) cut to at most n runes, the last
// of which is "…" when it was cut (never after a space). History entries,
// summaries and action results quote text this way; n <= 0 gives "".
func Excerpt(s string, n int) string {
	s = OneLine(s)
	if n <= 0 {
		return ""
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return strings.TrimRight(string([]rune(s)[:n-1]), " ") + "…"
}

// ClipRunes returns at most n runes of s, the last of which is "…" when
// it was cut; unlike Excerpt it keeps line breaks. n <= 0 gives "".
func ClipRunes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n || utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
