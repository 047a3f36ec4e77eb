package placeholders

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/twostep/twostep/textclip"
	"github.com/twostep/twostep/workflow"
)

// PlanProgressText returns the PLAN_PROGRESS value of the action-plan mode's
// re-planning prompt: every action message of round (the steps run so
// far, oldest first) with its status and summary — what an action
// returned fenced as data, as in the history — then the steps of the
// plan not run yet, each as the JSON step the planner wrote (references
// back in parameters.documentList and parameters.connectionReference).
func PlanProgressText(msgs []workflow.Message, round int, remaining []workflow.PlanStep) string {
	var b bytes.Buffer
	b.WriteString("Steps run so far (oldest first):")
	run := 0
	for i := range msgs {
		m := &msgs[i]
		if m.Round != round || m.Role != workflow.RoleAction {
			continue
		}
		run++
		status := m.Status
		if status == "" {
			status = workflow.MessageSuccess
		}
		fmt.Fprintf(&b, "\n- step %d: %s (%s)", m.Step, m.Action, status)
		summary, data := splitSummary(*m)
		if summary != "" {
			b.WriteString(": ")
			b.WriteString(textclip.OneLine(summary))
		}
		if data != "" {
			b.WriteString("\n  result: ")
			b.WriteString(fenceData(textclip.Excerpt(data, textExcerpt)))
		}
	}
	if run == 0 {
		b.WriteString("\n(none)")
	}
	b.WriteString("\n\nSteps not run yet (your new plan replaces them):")
	if len(remaining) == 0 {
		b.WriteString("\n(none: the failed step was the last one)")
	}
	for _, s := range remaining {
		b.WriteString("\n- ")
		b.WriteString(planStepJSON(s))
	}
	return b.String()
}

// planStepJSON writes s back in the planner's format.
func planStepJSON(s workflow.PlanStep) string {
	params := maps.Clone(s.Parameters)
	if params == nil {
		params = map[string]any{}
	}
	if len(s.Documents) > 0 {
		params["documentList"] = s.Documents
	}
	if s.Connection != "" {
		params["connectionReference"] = s.Connection
	}
	out := struct {
		Action      string         `json:"action"`
		Parameters  map[string]any `json:"parameters"`
		ResultLabel string         `json:"resultLabel,omitempty"`
	}{s.Action, params, s.ResultLabel}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return fmt.Sprintf("{\"action\": %q}", s.Action)
	}
	return textclip.Excerpt(buf.String(), 2*textExcerpt)
}
