package templates

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// MaxRenderedBytes caps a rendered template, all its parts together: 4 MiB
// is about a million tokens, more than any model's context, and keeps a
// template that repeats a long value thousands of times (an admin's render
// override, say) from building hundreds of megabytes. Render checks it
// before it copies a part, so an oversize render allocates nothing more.
const MaxRenderedBytes = 4 << 20

// ErrTooLarge is returned (wrapped, with the template's name and size) by
// Render and RenderPieces when the result would be over MaxRenderedBytes.
var ErrTooLarge = errors.New("the rendered prompt is too large")

// Part is one chat message of a rendered template.
type Part struct {
	// Role is the section's role: one of the prompt roles
	// workflow.PromptSystem, PromptUser and PromptAssistant.
	Role    string
	Content string
}

// Template is a parsed prompt template: a sequence of role sections, each a
// list of literal text and {{KEY:NAME}} placeholders. A Template is
// immutable after Parse and safe for concurrent use.
type Template struct {
	// Name is the template's name ("stage1"); Source is its text as read.
	Name   string
	Source string

	sections []section
	keys     []string
}

type section struct {
	role   string
	chunks []chunk
	// fixed is the rendered part of a section without placeholders (most
	// built-in system sections) for each Output, made once by Parse; ""
	// for a section with placeholders (Parse refuses an empty section).
	// Such a part is the same on every render, so a render neither copies
	// it nor allocates for it, and the traces of the calls share the one
	// string.
	fixed [2]string
}

// chunk is either literal text (key == "") or a placeholder, rendered for
// every Output or, inside an output block, for one only.
type chunk struct {
	text string
	key  string
	only block
}

// Output is the kind of reply a render asks for, which picks the
// template's output blocks (see Parse).
type Output int

// The outputs a template renders for.
const (
	// TextOutput is a reply asked for in the prompt alone (json_object or
	// text mode): the template's {{IF:TEXT_OUTPUT}} blocks are kept, its
	// {{IF:NATIVE_OUTPUT}} blocks left out.
	TextOutput Output = iota
	// NativeOutput is a reply whose shape the provider is given (a forced
	// tool or a json_schema response format): the other way round, so the
	// shape is not given twice.
	NativeOutput
)

// block says which Output a chunk is rendered for.
type block int

const (
	always block = iota
	textOnly
	nativeOnly
)

// keeps reports whether a chunk of block b is rendered for out.
func (b block) keeps(out Output) bool {
	return b == always || b == textOnly && out == TextOutput || b == nativeOnly && out == NativeOutput
}

// Keys returns the placeholder names the template uses, sorted and unique.
func (t Template) Keys() []string { return slices.Clone(t.keys) }

// NumKeys returns len(t.Keys()) without copying the keys.
func (t Template) NumKeys() int { return len(t.keys) }

// Uses reports whether t has the placeholder key.
func (t Template) Uses(key string) bool {
	_, ok := slices.BinarySearch(t.keys, key)
	return ok
}

// Render substitutes values into the template and returns one Part per
// section, in order. It has missingkey=error semantics: a key the template
// names but values lacks is an error, never an empty string (a present key
// with an empty value is fine). Values are inserted verbatim and never
// re-scanned, so a value containing "{{KEY:...}}" stays literal. A
// placeholder alone on its line whose value is empty (VALIDATION_FEEDBACK on
// a first attempt) removes that line, and one of the blank lines around it
// when it sat between two. Leading and trailing blank lines of each part
// are trimmed.
func (t Template) Render(values map[string]string) ([]Part, error) {
	return t.RenderFor(TextOutput, values)
}

// RenderFor is Render for a reply of kind out: only the output blocks of
// out are kept (Render is RenderFor(TextOutput, ...)).
func (t Template) RenderFor(out Output, values map[string]string) ([]Part, error) {
	parts, _, err := t.render(out, values, "", nil)
	return parts, err
}

// StablePrefix returns how many leading sections use none of keys: the
// parts of a render that stay byte-identical while only keys' values
// change (for a provider's prompt cache).
func (t Template) StablePrefix(keys ...string) int {
	for i, s := range t.sections {
		for _, c := range s.chunks {
			if c.key != "" && slices.Contains(keys, c.key) {
				return i
			}
		}
	}
	return len(t.sections)
}

// RenderPieces is Render with the value of key given as pieces, written
// one after the other where key stands, so that a long value built from
// parts (WORKFLOW_HISTORY from its entries) is copied once, into the
// part, instead of being joined first. value is the pieces joined: the
// bytes of the first part key stands in (no copy), or "" when t does not
// use key. values' own entry for key, if any, is ignored.
func (t Template) RenderPieces(out Output, values map[string]string, key string, pieces []string) (parts []Part, value string, err error) {
	return t.render(out, values, key, pieces)
}

// render is RenderFor, with key's value given as pieces when key is set.
func (t Template) render(out Output, values map[string]string, key string, pieces []string) ([]Part, string, error) {
	var missing []string
	for _, k := range t.keys {
		if _, ok := values[k]; !ok && (key == "" || k != key) {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return nil, "", fmt.Errorf("template %q: no value for %s", t.Name, strings.Join(missing, ", "))
	}
	piecesLen := 0
	for _, p := range pieces {
		piecesLen += len(p)
	}
	parts := make([]Part, 0, len(t.sections))
	var value string
	total := 0
	for _, s := range t.sections {
		total += len(s.fixed[out])
		if s.fixed[out] != "" {
			parts = append(parts, Part{Role: s.role, Content: s.fixed[out]})
			continue
		}
		size := 0
		for _, c := range s.chunks {
			switch {
			case !c.only.keeps(out):
			case c.key == "":
				size += len(c.text)
			case key != "" && c.key == key:
				size += piecesLen
			default:
				size += len(values[c.key])
			}
		}
		if total += size; total > MaxRenderedBytes {
			return nil, "", fmt.Errorf("template %q: %w: at least %d bytes, the limit is %d", t.Name, ErrTooLarge, total, MaxRenderedBytes)
		}
		var b strings.Builder
		b.Grow(size) // one allocation per part, however large the values
		skipNewline := false
		start, end := -1, -1 // where key's value is in b
		for _, c := range s.chunks {
			if !c.only.keeps(out) {
				continue
			}
			if c.key != "" {
				empty := false
				if key != "" && c.key == key {
					if start < 0 && value == "" {
						start = b.Len()
					}
					for _, p := range pieces {
						b.WriteString(p)
					}
					if end < 0 && value == "" {
						end = b.Len()
					}
					empty = piecesLen == 0
				} else {
					v := values[c.key]
					b.WriteString(v)
					empty = v == ""
				}
				// An empty value alone on its line removes the line.
				skipNewline = empty && (b.Len() == 0 || strings.HasSuffix(b.String(), "\n"))
				continue
			}
			text := c.text
			if skipNewline {
				text = strings.TrimPrefix(text, "\n")
				if strings.HasSuffix(b.String(), "\n\n") {
					// The removed line sat between blank lines: keep one.
					text = strings.TrimPrefix(text, "\n")
				}
				skipNewline = false
			}
			b.WriteString(text)
		}
		full := b.String()
		if start >= 0 {
			value = full[start:end]
		}
		parts = append(parts, Part{Role: s.role, Content: trimBlankLines(full)})
	}
	return parts, value, nil
}

// trimBlankLines removes leading blank lines and all trailing whitespace.
func trimBlankLines(s string) string {
	s = strings.TrimRight(s, " \t\r\n")
	for {
		line, rest, ok := strings.Cut(s, "\n")
		if !ok || strings.TrimSpace(line) != "" {
			return s
		}
		s = rest
	}
}
