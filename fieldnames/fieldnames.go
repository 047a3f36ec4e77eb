// Package fieldnames decides whether a parameter name is one of the
// forbidden ones (workflow.ForbiddenFields) however it is spelled: the
// model or an action's schema may write "documents" full-width, with a
// zero-width space, a trailing space or a Cyrillic "е", and a downstream
// service that normalises names would still read "documents". Every name
// is brought to a canonical form first (Canonical) and then compared as
// workflow.IsForbiddenField compares, ignoring case.
package fieldnames

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/twostep/twostep/workflow"
)

// Canonical returns name in NFKC (full-width and other compatibility
// forms become plain letters), without format characters (zero-width
// spaces and joiners, bidi marks, soft hyphens), trimmed of spaces, and
// with the Cyrillic and Greek letters that look like Latin ones folded to
// those Latin letters. It is meant for comparing, never for display.
func Canonical(name string) string {
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

// Forbidden reports whether name, in canonical form, is a forbidden field
// in any case.
func Forbidden(name string) bool {
	return workflow.IsForbiddenField(name) || workflow.IsForbiddenField(Canonical(name))
}

// KeyProblems is workflow.ForbiddenKeyProblems with names compared in
// canonical form: one line per forbidden key of params, sorted.
func KeyProblems(params map[string]any) []string {
	var lines []string
	for _, k := range slices.Sorted(maps.Keys(params)) {
		if Forbidden(k) {
			lines = append(lines, fmt.Sprintf("parameters.%s: forbidden key: documents, connections and history are attached by the engine, never passed as parameters", k))
		}
	}
	return lines
}
