package templates

import (
	"fmt"
	"slices"
	"strings"

	"github.com/twostep/twostep/textclip"
	"github.com/twostep/twostep/workflow"
)

// placeholderOpen starts a placeholder; a placeholder is "{{KEY:" followed
// by an upper-case name of letters, digits and underscores, then "}}".
const placeholderOpen = "{{KEY:"

// Parse parses a template's source. The source is split into role sections
// by divider lines of the form "--- system ---", "--- user ---" or
// "--- assistant ---" (text before the first divider must be blank). Inside
// a section, the lines between a line "{{IF:TEXT_OUTPUT}}" (or
// "{{IF:NATIVE_OUTPUT}}") and a line "{{END}}" are an output block, rendered
// only for that Output: the reply's shape, which a native output mode
// gives the provider instead. It fails when there is no section, a section
// is empty, an output block is unclosed or nested, a placeholder is
// malformed, or a placeholder names a key outside AllowedKeys(name).
// Parse is what Load uses, and what an admin's override goes through.
func Parse(name, source string) (Template, error) {
	t := Template{Name: name, Source: source}
	allowed := AllowedKeys(name)
	lines := strings.SplitAfter(source, "\n")
	var cur *section
	var body strings.Builder
	flush := func() error {
		if cur == nil {
			if strings.TrimSpace(body.String()) != "" {
				return fmt.Errorf("template %q: text before the first role divider (e.g. \"--- system ---\")", name)
			}
			return nil
		}
		if strings.TrimSpace(body.String()) == "" {
			return fmt.Errorf("template %q: the %s section is empty", name, cur.role)
		}
		chunks, err := scanBlocks(name, cur.role, body.String(), allowed)
		if err != nil {
			return err
		}
		cur.chunks = chunks
		if !slices.ContainsFunc(chunks, func(c chunk) bool { return c.key != "" }) {
			// No placeholder: the part is the same on every render.
			for _, out := range []Output{TextOutput, NativeOutput} {
				var b strings.Builder
				for _, c := range chunks {
					if c.only.keeps(out) {
						b.WriteString(c.text)
					}
				}
				cur.fixed[out] = trimBlankLines(b.String())
			}
		}
		t.sections = append(t.sections, *cur)
		return nil
	}
	for _, line := range lines {
		if role, ok := divider(line); ok {
			if err := flush(); err != nil {
				return Template{}, err
			}
			cur = &section{role: role}
			body.Reset()
			continue
		}
		body.WriteString(line)
	}
	if err := flush(); err != nil {
		return Template{}, err
	}
	if len(t.sections) == 0 {
		return Template{}, fmt.Errorf("template %q: no role sections (start one with \"--- system ---\")", name)
	}
	for _, s := range t.sections {
		for _, c := range s.chunks {
			if c.key != "" && !slices.Contains(t.keys, c.key) {
				t.keys = append(t.keys, c.key)
			}
		}
	}
	slices.Sort(t.keys)
	return t, nil
}

// The output block marker lines (see Parse).
const (
	ifTextOutput   = "{{IF:TEXT_OUTPUT}}"
	ifNativeOutput = "{{IF:NATIVE_OUTPUT}}"
	endBlock       = "{{END}}"
)

// scanBlocks splits a section body into its output blocks (dropping the
// marker lines) and scans each into chunks.
func scanBlocks(name, role, body string, allowed []string) ([]chunk, error) {
	var chunks []chunk
	only := always
	var seg strings.Builder
	emit := func() error {
		cs, err := scan(name, seg.String(), allowed)
		for i := range cs {
			cs[i].only = only
		}
		chunks = append(chunks, cs...)
		seg.Reset()
		return err
	}
	for _, line := range strings.SplitAfter(body, "\n") {
		marker := strings.TrimSpace(line)
		var next block
		switch marker {
		case ifTextOutput, ifNativeOutput:
			if only != always {
				return nil, fmt.Errorf("template %q: %s inside another output block of the %s section", name, marker, role)
			}
			next = textOnly
			if marker == ifNativeOutput {
				next = nativeOnly
			}
		case endBlock:
			if only == always {
				return nil, fmt.Errorf("template %q: %s without an output block in the %s section", name, endBlock, role)
			}
			next = always
		default:
			seg.WriteString(line)
			continue
		}
		if err := emit(); err != nil {
			return nil, err
		}
		only = next
	}
	if only != always {
		return nil, fmt.Errorf("template %q: an output block of the %s section has no %s line", name, role, endBlock)
	}
	return chunks, emit()
}

// divider reports whether line is a role divider and which role it opens.
func divider(line string) (string, bool) {
	s := strings.TrimSpace(line)
	inner, ok := strings.CutPrefix(s, "---")
	if !ok {
		return "", false
	}
	inner, ok = strings.CutSuffix(inner, "---")
	if !ok {
		return "", false
	}
	switch role := strings.TrimSpace(inner); role {
	case workflow.PromptSystem, workflow.PromptUser, workflow.PromptAssistant:
		return role, true
	}
	return "", false
}

// scan splits a section body into literal and placeholder chunks.
func scan(name, body string, allowed []string) ([]chunk, error) {
	var chunks []chunk
	for {
		i := strings.Index(body, placeholderOpen)
		if i < 0 {
			if body != "" {
				chunks = append(chunks, chunk{text: body})
			}
			return chunks, nil
		}
		if i > 0 {
			chunks = append(chunks, chunk{text: body[:i]})
		}
		rest := body[i+len(placeholderOpen):]
		end := strings.Index(rest, "}}")
		if end < 0 {
			return nil, fmt.Errorf("template %q: unterminated placeholder %q", name, excerpt(body[i:]))
		}
		key := rest[:end]
		if !validKeyName(key) {
			return nil, fmt.Errorf("template %q: malformed placeholder %q", name, excerpt(body[i:]))
		}
		if !IsKnownKey(key) {
			return nil, fmt.Errorf("template %q: unknown placeholder key %q", name, key)
		}
		if !slices.Contains(allowed, key) {
			return nil, fmt.Errorf("template %q: placeholder key %q is not allowed in this template (allowed: %s)",
				name, key, strings.Join(allowed, ", "))
		}
		chunks = append(chunks, chunk{key: key})
		body = rest[end+2:]
	}
}

// validKeyName reports whether s is a non-empty run of A–Z, 0–9 and "_".
func validKeyName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

// excerpt returns at most the first 40 bytes of s, for error messages.
func excerpt(s string) string {
	return textclip.Clip(s, 40)
}
