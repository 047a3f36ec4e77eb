package placeholders

import (
	"strings"

	"github.com/twostep/twostep/textclip"
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
		b.WriteString(textclip.OneLine(c.Label))
		b.WriteString(" (kind: ")
		b.WriteString(textclip.OneLine(c.Kind))
		b.WriteString(")")
		if d := textclip.OneLine(c.Description); d != "" {
			b.WriteString(": ")
			b.WriteString(d)
		}
	}
	return b.String()
}
