package placeholders

import (
	"encoding/json"
	"strings"

	"github.com/twostep/twostep/textclip"
	"github.com/twostep/twostep/workflow"
)

// Methods returns the AVAILABLE_METHODS value for exactly the given
// actions, in the given order: per action its name, effect and
// description, its parameter names (required ones first and marked), what
// documents it takes and the connection kind it uses. A caller that offers
// a subset (the action-plan mode's top-K) passes just that subset.
//
// Methods parses every action's parameter schema on every call; a caller
// that renders repeatedly (every Stage 1 prompt) uses Cache.Methods, which
// renders the same text.
func Methods(actions []workflow.ActionSpec) string {
	return (*Cache)(nil).Methods(actions)
}

// Methods is the package-level Methods, memoized in c: each action's
// parameter schema is parsed once while its bytes are unchanged.
func (c *Cache) Methods(actions []workflow.ActionSpec) string {
	return renderMethods(actions, c.params)
}

// renderMethods renders AVAILABLE_METHODS for actions, taking each
// action's parameter summary (see paramList) from params.
func renderMethods(actions []workflow.ActionSpec, params func(workflow.ActionSpec) string) string {
	if len(actions) == 0 {
		return "(no methods)"
	}
	// Each action's parameter summary first, so the text is written into
	// one buffer of about its size (it is rendered on every Stage 1 call).
	var stack [32]string
	summaries := stack[:0]
	size := 0
	for _, a := range actions {
		p := params(a)
		summaries = append(summaries, p)
		size += 96 + len(a.Name) + len(a.Description) + len(p) + len(a.Documents) + len(a.ConnectionKind)
	}
	var b strings.Builder
	b.Grow(size)
	for i, a := range actions {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("- ")
		b.WriteString(a.Name)
		b.WriteString(" [")
		b.WriteString(string(effectOf(a)))
		b.WriteString("]")
		if d := textclip.OneLine(a.Description); d != "" {
			b.WriteString(": ")
			b.WriteString(d)
		}
		b.WriteString("\n  parameters: ")
		b.WriteString(summaries[i])
		if a.Documents != "" && a.Documents != workflow.DocumentsNone {
			b.WriteString("\n  input documents: ")
			b.WriteString(string(a.Documents))
		}
		if a.ConnectionKind != "" {
			b.WriteString("\n  connection: ")
			b.WriteString(a.ConnectionKind)
			if a.ConnectionRequired {
				b.WriteString(" (required)")
			} else {
				b.WriteString(" (optional)")
			}
		}
	}
	return b.String()
}

func effectOf(a workflow.ActionSpec) workflow.Effect {
	if a.Effect == "" {
		return workflow.EffectRead
	}
	return a.Effect
}

// paramList renders "a (required, string), b (number)" or "(none)".
func paramList(schema json.RawMessage) string {
	s, err := workflow.ReadActionSchema(schema)
	params := s.Params()
	if err != nil || len(params) == 0 {
		return "(none)"
	}
	parts := make([]string, len(params))
	for i, p := range params {
		if p.Required {
			parts[i] = p.Name + " (required, " + p.Type + ")"
		} else {
			parts[i] = p.Name + " (" + p.Type + ")"
		}
	}
	return strings.Join(parts, ", ")
}
