package actionplan

import (
	"context"

	"github.com/twostep/twostep/messages"
	"github.com/twostep/twostep/templates/notices"
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
		done   []notices.Done
		failed int
	)
	for i := range msgs {
		m := &msgs[i]
		if m.Round == round && m.Role == workflow.RoleAction {
			done = append(done, messages.DoneStep(m, m.Action))
			if m.Status == workflow.MessageError {
				failed++
			}
		}
	}
	return notices.PlanDone(done, failed)
}

// unavailable ends the round without running anything: one assistant
// message saying the plan was unavailable, why, and a short excerpt of
// the model's reply; status failed (Resume plans again), stop reason
// plan_unavailable.
func unavailable(ctx context.Context, run workflow.Run, why, reply string) error {
	wf := run.Workflow()
	text := notices.PlanUnavailable(why, textclip.Clip(textclip.OneLine(reply), maxExcerpt))
	msg := messages.NewAssistant(messages.AssistantInput{WorkflowID: wf.ID, Round: wf.Round, Step: wf.Step, Text: text})
	return run.CommitStep(ctx, workflow.StepResult{
		Messages: []workflow.Message{msg}, Failed: true,
		End: &workflow.RoundEnd{
			Status: workflow.StatusFailed, Reason: workflow.StopPlanUnavailable,
			Error: textclip.Clip(textclip.OneLine("the model gave no usable plan: "+why), 500),
		},
	})
}
