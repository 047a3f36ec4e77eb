package actionplan

import (
	"context"
	"fmt"
	"strings"

	"github.com/twostep/twostep/messages"
	"github.com/twostep/twostep/textclip"
	"github.com/twostep/twostep/workflow"
)

// maxExcerpt bounds the excerpt of an unusable reply shown in the
// plan-unavailable message (SAGE's fallback shows as much).
const maxExcerpt = 2000

// finish ends a round whose plan ran to its end without workflow.complete:
// an assistant message listing what was done (no model call), status
// completed, stop reason completed.
func finish(ctx context.Context, run workflow.Run) error {
	wf := run.Workflow()
	msg := messages.NewAssistant(messages.AssistantInput{
		WorkflowID: wf.ID, Round: wf.Round, Step: wf.Step, Text: doneText(run.Messages(), wf.Round),
	})
	return run.CommitStep(ctx, workflow.StepResult{
		Action: workflow.CompleteAction, Messages: []workflow.Message{msg},
		End: &workflow.RoundEnd{Status: workflow.StatusCompleted, Reason: workflow.StopCompleted},
	})
}

// doneText lists, in step order, each action message of round with its
// status and summary and the documents it produced, with their references.
func doneText(msgs []workflow.Message, round int) string {
	var (
		b      strings.Builder
		done   []*workflow.Message
		failed int
	)
	for i := range msgs {
		m := &msgs[i]
		if m.Round == round && m.Role == workflow.RoleAction {
			done = append(done, m)
			if m.Status == workflow.MessageError {
				failed++
			}
		}
	}
	fmt.Fprintf(&b, "I carried out the plan for this round: %s", workflow.Count(len(done), "step", ""))
	if failed > 0 {
		fmt.Fprintf(&b, ", %d of them failed", failed)
	}
	b.WriteString(".")
	for _, m := range done {
		status := m.Status
		if status == "" {
			status = workflow.MessageSuccess
		}
		fmt.Fprintf(&b, "\n%d. %s (%s): %s", m.Step, m.Action, status, m.Summary)
		for _, d := range m.Documents {
			fmt.Fprintf(&b, "\n   - document %s (docItem:%s:%s)", d.Name, d.ID, d.Name)
		}
	}
	return b.String()
}

// unavailable ends the round without running anything: one assistant
// message saying the plan was unavailable, why, and a short excerpt of
// the model's reply; status failed (Resume plans again), stop reason
// plan_unavailable.
func unavailable(ctx context.Context, run workflow.Run, why, reply string) error {
	wf := run.Workflow()
	text := fmt.Sprintf("The plan for this round was unavailable: %s. Nothing was run.\n\nThe model replied: %s",
		why, replyExcerpt(reply))
	msg := messages.NewAssistant(messages.AssistantInput{WorkflowID: wf.ID, Round: wf.Round, Step: wf.Step, Text: text})
	return run.CommitStep(ctx, workflow.StepResult{
		Messages: []workflow.Message{msg}, Failed: true,
		End: &workflow.RoundEnd{
			Status: workflow.StatusFailed, Reason: workflow.StopPlanUnavailable,
			Error: textclip.Clip(textclip.OneLine("the model gave no usable plan: "+why), 500),
		},
	})
}

// replyExcerpt is reply on one line, quoted, cut to maxExcerpt bytes.
func replyExcerpt(reply string) string {
	s := textclip.Clip(textclip.OneLine(reply), maxExcerpt)
	if s == "" {
		return "(an empty reply)"
	}
	return fmt.Sprintf("%q", s)
}
