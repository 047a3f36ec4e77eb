package messages

import (
	"fmt"
	"strings"
	"time"

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
	var b strings.Builder
	fmt.Fprintf(&b, "I stopped because this round reached its limit of %d steps before the request was completed.", in.MaxSteps)
	var done []*workflow.Message
	for i := range in.Messages {
		m := &in.Messages[i]
		if m.Round == in.Round && m.Role == workflow.RoleAction {
			done = append(done, m)
		}
	}
	if len(done) == 0 {
		b.WriteString("\nNo step was completed in this round.")
	} else {
		b.WriteString("\n\nWhat was done in this round:")
		for _, m := range done {
			fmt.Fprintf(&b, "\n%d. %s (%s): %s", m.Step, orUnknown(m.Action), orStatus(m.Status), m.Summary)
			for _, d := range m.Documents {
				fmt.Fprintf(&b, "\n   - document %s (docItem:%s:%s)", d.Name, d.ID, d.Name)
			}
		}
	}
	b.WriteString("\n\nStart another round to continue from here.")
	return NewAssistant(AssistantInput{
		WorkflowID: in.WorkflowID, Round: in.Round, Step: in.Step, Text: b.String(), Now: in.Now,
	})
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
