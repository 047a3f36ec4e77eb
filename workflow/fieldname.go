package workflow

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Parameter names are compared with ForbiddenFields in a canonical form:
// the model or an action's schema may write "documents" full-width, with a
// zero-width space, a trailing space or a Cyrillic "е", and a downstream
// service that normalises names would still read "documents"
// (IsForbiddenField).

// CanonicalFieldName returns name in NFKC (full-width and other compatibility
// forms become plain letters), without format characters (zero-width
// spaces and joiners, bidi marks, soft hyphens), trimmed of spaces, and
// with the Cyrillic and Greek letters that look like Latin ones folded to
// those Latin letters. It is meant for comparing, never for display.
func CanonicalFieldName(name string) string {
	name = norm.NFKC.String(name)
	name = strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Cf, r) {
			return -1
		}
		if l, ok := latinLookalike(r); ok {
			return l
		}
		return r
	}, name)
	return strings.TrimFunc(name, unicode.IsSpace)
}
