package messages

import (
	"time"

	"github.com/twostep/twostep/templates/notices"
	"github.com/twostep/twostep/workflow"
)

// MaxStepsInput is what the max-steps closing message is made from.
type MaxStepsInput struct {
	WorkflowID string
	Round      int
	Step       int
	MaxSteps   int
	// Messages are the workflow's messages; only the action messages of
	// Round are listed.
	Messages []workflow.Message
	Now      time.Time
}

// NewMaxSteps returns the assistant message that closes a round which hit
// its step limit. It is written without a model call: it says the limit was
// reached and lists, in step order, each action message of the round with
// its status and summary, and the documents the round produced.
func NewMaxSteps(in MaxStepsInput) workflow.Message {
	var done []notices.Done
	for i := range in.Messages {
		m := &in.Messages[i]
		if m.Round == in.Round && m.Role == workflow.RoleAction {
			done = append(done, DoneStep(m, orUnknown(m.Action)))
		}
	}
	return NewAssistant(AssistantInput{
		WorkflowID: in.WorkflowID, Round: in.Round, Step: in.Step, Text: notices.MaxSteps(in.MaxSteps, done), Now: in.Now,
	})
}

// DoneStep is action message m as a closing message lists it, under the
// action name given (a step's status defaults to success).
func DoneStep(m *workflow.Message, action string) notices.Done {
	d := notices.Done{Step: m.Step, Action: action, Status: string(orStatus(m.Status)), Summary: m.Summary}
	for _, doc := range m.Documents {
		d.Documents = append(d.Documents, notices.Doc{ID: doc.ID, Name: doc.Name})
	}
	return d
}

func orUnknown(action string) string {
	if action == "" {
		return "no action"
	}
	return action
}

func orStatus(s workflow.MessageStatus) workflow.MessageStatus {
	if s == "" {
		return workflow.MessageSuccess
	}
	return s
}
