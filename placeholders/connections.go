package placeholders

import (
	"strings"

	"github.com/twostep/twostep/workflow"
)

// ConnectionsIndex returns the AVAILABLE_CONNECTIONS_INDEX value: one line
// per connection with its label, kind and description, in the given order,
// or "(no connections)". workflow.Connection carries no secret, so none can
// be rendered.
func ConnectionsIndex(conns []workflow.Connection) string {
	if len(conns) == 0 {
		return "(no connections)"
	}
	var b strings.Builder
	for i, c := range conns {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("- ")
		b.WriteString(oneLine(c.Label))
		b.WriteString(" (kind: ")
		b.WriteString(oneLine(c.Kind))
		b.WriteString(")")
		if d := oneLine(c.Description); d != "" {
			b.WriteString(": ")
			b.WriteString(d)
		}
	}
	return b.String()
}

// oneLine collapses every run of whitespace (newlines included) in s into
// one space and trims it, so a value cannot break the line structure of an
// index.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
