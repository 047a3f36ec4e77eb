package modes

import (
	"context"

	"github.com/twostep/twostep/messages"
	"github.com/twostep/twostep/workflow"
)

// Failure describes a step that failed before or instead of its action:
// replies rejected too often, inputs that did not resolve.
type Failure struct {
	Action    string
	Objective string
	Learnings []string
	// Reason says why, for a person (it becomes the message's text and
	// summary).
	Reason string
	// Next is the checkpoint the following step starts from (nil: select).
	Next *workflow.Checkpoint
}

// Fail commits the current step as a failed action message (status error);
// it counts toward the failure breaker and the round goes on unless a
// round-ending rule applies.
func Fail(ctx context.Context, run workflow.Run, f Failure) error {
	wf := run.Workflow()
	msg := messages.NewFailedStep(messages.FailedStepInput{
		WorkflowID: wf.ID, Round: wf.Round, Step: wf.Step, Action: f.Action,
		Objective: f.Objective, Learnings: f.Learnings, Reason: f.Reason,
	})
	return run.CommitStep(ctx, workflow.StepResult{
		Action: f.Action, Messages: []workflow.Message{msg}, Failed: true, Next: f.Next,
	})
}

// Complete commits the current step as the end of the round: an assistant
// message with text (and no action message), status completed, stop reason
// completed.
func Complete(ctx context.Context, run workflow.Run, text string, learnings []string) error {
	wf := run.Workflow()
	msg := messages.NewAssistant(messages.AssistantInput{
		WorkflowID: wf.ID, Round: wf.Round, Step: wf.Step, Text: text, Learnings: learnings,
	})
	return run.CommitStep(ctx, workflow.StepResult{
		Action: workflow.CompleteAction, Messages: []workflow.Message{msg},
		End: &workflow.RoundEnd{Status: workflow.StatusCompleted, Reason: workflow.StopCompleted},
	})
}

// Closing returns the assistant message that ends a round at maxSteps,
// listing what the round did; it makes no model call. Both modes' Closing
// methods return it.
func Closing(run workflow.Run) workflow.Message {
	wf := run.Workflow()
	return messages.NewMaxSteps(messages.MaxStepsInput{
		WorkflowID: wf.ID, Round: wf.Round, Step: wf.Step, MaxSteps: wf.MaxSteps, Messages: run.Messages(),
	})
}
