package workflow

import "time"

// Role says who a message speaks for.
type Role string

// The message roles.
const (
	RoleUser      Role = "user"
	RoleAction    Role = "action"
	RoleAssistant Role = "assistant"
	// RoleSummary is a history compaction's summary (React mode): its
	// Text stands in WORKFLOW_HISTORY for every message up to
	// CompactedThrough, and folds in the summary before it.
	RoleSummary Role = "summary"
)

// MessageStatus is the outcome of an action message.
type MessageStatus string

// Action message outcomes.
const (
	MessageSuccess MessageStatus = "success"
	MessageError   MessageStatus = "error"
)

// Message is an append-only record of a workflow. Seq is assigned by the
// store on commit: gap-free and unique within the workflow, starting at 1.
type Message struct {
	ID              string         `json:"id"`
	WorkflowID      string         `json:"workflowId"`
	Seq             int64          `json:"seq"`
	Round           int            `json:"round"`
	Step            int            `json:"step"`
	Role            Role           `json:"role"`
	Text            string         `json:"text"`
	Action          string         `json:"action,omitempty"`
	ActionObjective string         `json:"actionObjective,omitempty"`
	Parameters      map[string]any `json:"parameters,omitempty"`
	Status          MessageStatus  `json:"status,omitempty"`
	DocumentsLabel  string         `json:"documentsLabel,omitempty"`
	Documents       []Document     `json:"documents"`
	Summary         string         `json:"summary,omitempty"`
	Findings        string         `json:"findings,omitempty"`
	Learnings       []string       `json:"learnings,omitempty"`
	// CompactedThrough, on a summary message, is the seq of the newest
	// message the summary covers.
	CompactedThrough int64 `json:"compactedThrough,omitempty"`
	// ApprovedBy, on the action message of a call a standing approval let
	// run without a pause, names that approval and who granted it.
	ApprovedBy *ApprovedBy `json:"approvedBy,omitempty"`
	// DurationMs, on an action message, is how long the action ran, in
	// milliseconds (0 on other messages and on steps that ran nothing).
	DurationMs int64     `json:"durationMs,omitempty"`
	CreatedAt  time.Time `json:"createdAt"`
}

// Document is the metadata of bytes attached to a message. The content is
// stored apart and read with Store.DocumentContent.
type Document struct {
	ID         string `json:"id"`
	WorkflowID string `json:"workflowId"`
	MessageID  string `json:"messageId"`
	Name       string `json:"name"`
	MimeType   string `json:"mimeType"`
	Size       int64  `json:"size"`
}

// DocumentContent is a document with its bytes, as committed by the engine
// and handed to actions.
type DocumentContent struct {
	Document
	Content []byte `json:"-"`
}
