// Package textclip is the one place text is cut to a size: every prompt,
// problem line, reason, trace and title that quotes text of unbounded
// length bounds it with these functions, so a cut never splits a UTF-8
// sequence and always says, the same way ("…"), that it cut.
//
// Byte cuts (Cut, Clip) bound storage and wire sizes and cost O(n),
// whatever len(s); rune cuts (CutRunes, ClipRunes, Excerpt) bound what a
// reader or a model sees in characters. The package imports only the
// standard library.
package textclip

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Ellipsis is what a clipped text ends with.
const Ellipsis = "…"

// Cut returns at most n bytes of s without splitting a rune (and without
// an ellipsis): a prefix that is still valid where s was. n <= 0 gives "".
func Cut(s string, n int) string {
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

// Clip returns at most n bytes of s, never splitting a UTF-8 sequence,
// followed by "…" when it was cut. It bounds text that quotes model or
// action output in problem lines, reasons and traces.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return Cut(s, n) + Ellipsis
}

// CutRunes returns the first n runes of s (all of s when it has no more;
// "" when n <= 0), without an ellipsis. A byte of s that is not valid
// UTF-8 counts as one rune and, in a cut, comes out as U+FFFD, as
// string([]rune(s)[:n]) gives it.
func CutRunes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	end := len(s)
	for k := range s {
		if n == 0 {
			end = k
			break
		}
		n--
	}
	if end == len(s) {
		return s
	}
	if p := s[:end]; utf8.ValidString(p) {
		return p
	}
	return string([]rune(s[:end])) // each invalid byte becomes U+FFFD
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
	return CutRunes(s, n-1) + Ellipsis
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
	return strings.TrimRight(CutRunes(s, n-1), " ") + Ellipsis
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
