package messages

import (
	"fmt"
	"time"

	"github.com/twostep/twostep/textclip"
	"github.com/twostep/twostep/workflow"
)

// ActionInput is what an action message is made from: the step, what
// Stage 1 chose, the parameters it ran with and the observation.
type ActionInput struct {
	WorkflowID string
	Round      int
	Step       int
	Action     string
	Objective  string
	Learnings  []string
	Parameters map[string]any
	// Result is what the action returned; Err is its error, if any (an
	// action error is an explained step failure: status "error").
	Result workflow.ActionResult
	Err    error
	// Label overrides the documentsLabel (the action-plan mode's
	// resultLabel); "" means ActionLabel(Round, Step, Action).
	Label string
	Now   time.Time
}

// NewAction returns the action message of one executed step and the output
// documents to commit with it. Text is the action's text result (or its
// error), Status is success or error, Summary is Summary(...) (at most
// MaxSummary characters), Findings an excerpt of the text result, and
// Learnings those of Stage 1.
func NewAction(in ActionInput) (workflow.Message, []workflow.DocumentContent) {
	m := workflow.Message{
		ID:              workflow.NewID(workflow.PrefixMessage),
		WorkflowID:      in.WorkflowID,
		Round:           in.Round,
		Step:            in.Step,
		Role:            workflow.RoleAction,
		Text:            in.Result.Text,
		Action:          in.Action,
		ActionObjective: in.Objective,
		Parameters:      in.Parameters,
		Status:          workflow.MessageSuccess,
		Learnings:       nonEmpty(in.Learnings),
		CreatedAt:       now(in.Now),
	}
	if in.Err != nil {
		m.Status = workflow.MessageError
		m.Text = in.Err.Error()
	}
	docs := attach(&m, in.Result.Documents)
	if len(docs) > 0 {
		m.DocumentsLabel = in.Label
		if m.DocumentsLabel == "" {
			m.DocumentsLabel = ActionLabel(in.Round, in.Step, in.Action)
		}
	}
	m.Summary = Summary(Observation{Action: in.Action, Text: in.Result.Text, Err: in.Err,
		Label: m.DocumentsLabel, Documents: m.Documents})
	if in.Err == nil {
		m.Findings = Findings(in.Result.Text)
	}
	return m, docs
}

// FailedStepInput describes a step that failed before its action ran (its
// Stage 1 or Stage 2 reply was rejected too often, or its references did
// not resolve).
type FailedStepInput struct {
	WorkflowID string
	Round      int
	Step       int
	// Action and Objective are set when Stage 1 got that far.
	Action    string
	Objective string
	Learnings []string
	// Reason says why, e.g. "Stage 1 rejected 3 times: ...".
	Reason string
	Now    time.Time
}

// NewFailedStep returns the action message recording a failed step: status
// error, Text the full reason, Summary the reason cut to MaxSummary.
func NewFailedStep(in FailedStepInput) workflow.Message {
	return workflow.Message{
		ID:              workflow.NewID(workflow.PrefixMessage),
		WorkflowID:      in.WorkflowID,
		Round:           in.Round,
		Step:            in.Step,
		Role:            workflow.RoleAction,
		Text:            in.Reason,
		Action:          in.Action,
		ActionObjective: in.Objective,
		Status:          workflow.MessageError,
		Documents:       []workflow.Document{},
		Summary:         textclip.Excerpt("step failed: "+textclip.OneLine(textclip.Cut(in.Reason, 4*MaxSummary)), MaxSummary),
		Learnings:       nonEmpty(in.Learnings),
		CreatedAt:       now(in.Now),
	}
}

// AssistantInput is what an assistant message is made from.
type AssistantInput struct {
	WorkflowID string
	Round      int
	Step       int
	Text       string
	Learnings  []string
	Now        time.Time
}

// NewAssistant returns an assistant message (a final answer of a round).
func NewAssistant(in AssistantInput) workflow.Message {
	return workflow.Message{
		ID:         workflow.NewID(workflow.PrefixMessage),
		WorkflowID: in.WorkflowID,
		Round:      in.Round,
		Step:       in.Step,
		Role:       workflow.RoleAssistant,
		Text:       in.Text,
		Documents:  []workflow.Document{},
		Learnings:  nonEmpty(in.Learnings),
		CreatedAt:  now(in.Now),
	}
}

func now(t time.Time) time.Time {
	if t.IsZero() {
		return time.Now().UTC()
	}
	return t
}

// nonEmpty returns the non-blank entries of list, or nil.
func nonEmpty(list []string) []string {
	var out []string
	for _, s := range list {
		if textclip.OneLine(s) != "" {
			out = append(out, s)
		}
	}
	return out
}

// SummaryInput is what a compaction's summary message is made from.
type SummaryInput struct {
	WorkflowID string
	Round      int
	Step       int
	// Text is the summary the compaction call wrote; Entries are the
	// messages it covers, oldest first (the newest one's seq is the
	// message's CompactedThrough).
	Text    string
	Entries []workflow.Message
	Now     time.Time
}

// NewSummary returns a message of role summary: Text stands in the history
// for every message up to the newest of Entries, and its Summary says how
// many entries it covers and through which step.
func NewSummary(in SummaryInput) workflow.Message {
	m := workflow.Message{
		ID:         workflow.NewID(workflow.PrefixMessage),
		WorkflowID: in.WorkflowID,
		Round:      in.Round,
		Step:       in.Step,
		Role:       workflow.RoleSummary,
		Text:       in.Text,
		Documents:  []workflow.Document{},
		CreatedAt:  now(in.Now),
	}
	if n := len(in.Entries); n > 0 {
		last := in.Entries[n-1]
		m.CompactedThrough = last.Seq
		m.Summary = fmt.Sprintf("history compacted: %s through round %d, step %d summarised",
			workflow.Count(n, "entry", "entries"), last.Round, last.Step)
	}
	return m
}
