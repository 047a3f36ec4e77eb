package httpapi

import (
	"time"

	"github.com/twostep/twostep/workflow"
)

// WorkflowView is a workflow as the API shows it (DESIGN §6): the stored
// form without its version and checkpoint.
type WorkflowView struct {
	ID         string              `json:"id"`
	UserID     string              `json:"userId"`
	Mode       workflow.ModeName   `json:"mode" enum:"react,actionplan"`
	Status     workflow.Status     `json:"status" enum:"running,awaiting_approval,completed,failed,stopped"`
	StopReason workflow.StopReason `json:"stopReason"`
	Round      int                 `json:"round"`
	Step       int                 `json:"step"`
	MaxSteps   int                 `json:"maxSteps"`
	Title      string              `json:"title" doc:"The first line of the first prompt (at most 100 characters)"`
	Error      string              `json:"error"`
	Stats      workflow.Stats      `json:"stats"`
	CreatedAt  time.Time           `json:"createdAt"`
	UpdatedAt  time.Time           `json:"updatedAt"`
	// PendingApproval is the step a paused round waits on.
	PendingApproval *workflow.PendingApproval `json:"pendingApproval,omitempty" doc:"The step an awaiting_approval round waits on: decide it at approvals/{id}"`
	// ForkedFrom is set on a workflow made by POST .../fork.
	ForkedFrom   *workflow.ForkOrigin `json:"forkedFrom,omitempty" doc:"On a fork: the workflow and step it was forked from"`
	QueuedRounds []QueuedRoundView    `json:"queuedRounds" doc:"Rounds sent with onBusy=enqueue or interrupt that wait for the current round, in the order they will run; empty when none"`
}

// DocumentView is a document's metadata; its bytes are at
// /api/v1/workflows/{id}/documents/{docId}.
type DocumentView struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	MimeType string `json:"mimeType"`
	Size     int64  `json:"size"`
}

// MessageView is a message as the API shows it (DESIGN §6).
type MessageView struct {
	ID              string                 `json:"id"`
	Seq             int64                  `json:"seq"`
	Round           int                    `json:"round"`
	Step            int                    `json:"step"`
	Role            workflow.Role          `json:"role" enum:"user,action,assistant,summary"`
	Text            string                 `json:"text"`
	Action          string                 `json:"action"`
	ActionObjective string                 `json:"actionObjective"`
	Parameters      map[string]any         `json:"parameters" nullable:"true" doc:"The business parameters of an action message; null on other messages"`
	Status          workflow.MessageStatus `json:"status"`
	DocumentsLabel  string                 `json:"documentsLabel"`
	Documents       []DocumentView         `json:"documents"`
	Summary         string                 `json:"summary"`
	Findings        string                 `json:"findings"`
	Learnings       []string               `json:"learnings"`
	// CompactedThrough is set on a summary message only.
	CompactedThrough int64 `json:"compactedThrough,omitempty" doc:"On a summary message (a history compaction): the seq of the newest message its text summarises"`
	// ApprovedBy is set on the action message of a call a standing
	// approval let run (docs/approvals.md).
	ApprovedBy *workflow.ApprovedBy `json:"approvedBy,omitempty" doc:"The standing approval that let this call run without a pause, and who granted it"`
	CreatedAt  time.Time            `json:"createdAt"`
}

func viewWorkflow(w *workflow.Workflow) WorkflowView {
	return WorkflowView{
		ID: w.ID, UserID: w.UserID, Mode: w.Mode, Status: w.Status, StopReason: w.StopReason,
		Round: w.Round, Step: w.Step, MaxSteps: w.MaxSteps, Title: w.Title, Error: w.Error, Stats: w.Stats.Public(),
		CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt, PendingApproval: viewPending(w.PendingApproval),
		ForkedFrom: forkedFrom(w.ForkedFrom), QueuedRounds: viewQueue(w),
	}
}

func forkedFrom(o workflow.ForkOrigin) *workflow.ForkOrigin {
	if o == (workflow.ForkOrigin{}) {
		return nil
	}
	return &o
}

func viewMessage(m workflow.Message) MessageView {
	docs := make([]DocumentView, len(m.Documents))
	for i, d := range m.Documents {
		docs[i] = DocumentView{ID: d.ID, Name: d.Name, MimeType: d.MimeType, Size: d.Size}
	}
	learnings := m.Learnings
	if learnings == nil {
		learnings = []string{}
	}
	return MessageView{
		ID: m.ID, Seq: m.Seq, Round: m.Round, Step: m.Step, Role: m.Role, Text: m.Text,
		Action: m.Action, ActionObjective: m.ActionObjective, Parameters: m.Parameters,
		Status: m.Status, DocumentsLabel: m.DocumentsLabel, Documents: docs, Summary: m.Summary,
		Findings: m.Findings, Learnings: learnings, CompactedThrough: m.CompactedThrough, ApprovedBy: m.ApprovedBy, CreatedAt: m.CreatedAt,
	}
}
