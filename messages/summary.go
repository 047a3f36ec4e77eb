package messages

import (
	"strings"

	"github.com/twostep/twostep/textclip"
	"github.com/twostep/twostep/workflow"
)

// Size bounds of the derived texts, in characters (runes).
const (
	MaxSummary  = 300
	MaxFindings = 600
)

// Observation is what an executed action left behind, as Summary reads it.
type Observation struct {
	Action    string
	Text      string
	Err       error
	Label     string
	Documents []workflow.Document
}

// Summary derives an action message's summary from its observation,
// deterministically and in at most MaxSummary characters:
//
//	ai.process succeeded; 2 documents (a.pdf, b.csv) as round1_step2_ai_process; result: <excerpt>
//	crm.update failed: <error excerpt>
func Summary(o Observation) string {
	var b strings.Builder
	b.WriteString(o.Action)
	if o.Err != nil {
		b.WriteString(" failed: ")
		b.WriteString(textclip.OneLine(textclip.Cut(o.Err.Error(), 4*MaxSummary)))
		return textclip.Excerpt(b.String(), MaxSummary)
	}
	b.WriteString(" succeeded")
	if n := len(o.Documents); n > 0 {
		b.WriteString("; ")
		b.WriteString(workflow.Count(n, "document", ""))
		b.WriteString(" (")
		names := make([]string, 0, min(n, 3))
		for _, d := range o.Documents[:min(n, 3)] {
			names = append(names, textclip.Excerpt(d.Name, 40))
		}
		b.WriteString(strings.Join(names, ", "))
		if n > 3 {
			b.WriteString(", …")
		}
		b.WriteString(") as ")
		b.WriteString(o.Label)
	}
	if t := textclip.OneLine(textclip.Cut(o.Text, 4*MaxSummary)); t != "" {
		b.WriteString("; result: ")
		b.WriteString(t)
	} else {
		b.WriteString("; no text result")
	}
	return textclip.Excerpt(b.String(), MaxSummary)
}

// Findings returns a short excerpt of an action's text result: on one line,
// at most MaxFindings characters.
func Findings(text string) string {
	return textclip.Excerpt(textclip.Cut(text, 4*MaxFindings), MaxFindings)
}
