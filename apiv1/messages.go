package apiv1

import "time"

// MessageView is a message as the API shows it (DESIGN §6): a user
// prompt, an action's result, an assistant answer or a history
// compaction's summary.
type MessageView struct {
	ID              string         `json:"id"`
	Seq             int64          `json:"seq"`
	Round           int            `json:"round"`
	Step            int            `json:"step"`
	Role            string         `json:"role" enum:"user,action,assistant,summary"`
	Text            string         `json:"text"`
	Action          string         `json:"action"`
	ActionObjective string         `json:"actionObjective"`
	Parameters      map[string]any `json:"parameters" nullable:"true" doc:"The business parameters of an action message; null on other messages"`
	Status          string         `json:"status"` // success, error, rejected (action messages)
	DocumentsLabel  string         `json:"documentsLabel"`
	Documents       []DocumentView `json:"documents"`
	Summary         string         `json:"summary"`
	Findings        string         `json:"findings"`
	Learnings       []string       `json:"learnings"`
	// CompactedThrough is set on a summary message only.
	CompactedThrough int64 `json:"compactedThrough,omitempty" doc:"On a summary message (a history compaction): the seq of the newest message its text summarises"`
	// ApprovedBy is set on the action message of a call a standing
	// approval let run (docs/approvals.md).
	ApprovedBy *ApprovedBy `json:"approvedBy,omitempty" doc:"The standing approval that let this call run without a pause, and who granted it"`
	DurationMs int64       `json:"durationMs,omitempty" doc:"On an action message, how long the action ran, in milliseconds"`
	CreatedAt  time.Time   `json:"createdAt"`
}

// DocumentView is a document's metadata; its bytes are at
// /api/v1/workflows/{id}/documents/{docId}.
type DocumentView struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	MimeType string `json:"mimeType"`
	Size     int64  `json:"size"`
}

// MessageList is a workflow's messages in seq order.
type MessageList struct {
	Messages []MessageView `json:"messages"`
}

// ApprovedBy names the standing approval that let a call run without a
// pause and the person who granted it.
type ApprovedBy struct {
	StandingApprovalID string `json:"standingApprovalId"`
	GrantedBy          string `json:"grantedBy"`
}
