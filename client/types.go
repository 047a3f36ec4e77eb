package client

import (
	"encoding/json"
	"time"
)

// Workflow is a workflow as the API shows it.
type Workflow struct {
	ID              string           `json:"id"`
	UserID          string           `json:"userId"`
	Mode            string           `json:"mode"`
	Status          string           `json:"status"` // running, awaiting_approval, completed, failed, stopped
	StopReason      string           `json:"stopReason"`
	Round           int              `json:"round"`
	Step            int              `json:"step"`
	MaxSteps        int              `json:"maxSteps"`
	Title           string           `json:"title"`
	Error           string           `json:"error"`
	Stats           Stats            `json:"stats"`
	CreatedAt       time.Time        `json:"createdAt"`
	UpdatedAt       time.Time        `json:"updatedAt"`
	PendingApproval *PendingApproval `json:"pendingApproval,omitempty"`
	// ForkedFrom is set on a workflow made by Client.Fork.
	ForkedFrom *ForkOrigin `json:"forkedFrom,omitempty"`
	// QueuedRounds wait for the current round, in run order (rounds sent
	// with QueueRound while one ran).
	QueuedRounds []QueuedRound `json:"queuedRounds"`
}

// ForkOrigin names the workflow and the step a fork was made from.
type ForkOrigin struct {
	WorkflowID string `json:"workflowId"`
	Round      int    `json:"round"`
	Step       int    `json:"step"`
}

// ForkRequest asks for a fork at step Step of round Round (see
// Client.Fork). With Selection the fork's step starts at Stage 2; with
// Parameters (for Selection, or else the selection the original recorded
// at that step) at execution; with neither it runs the step again.
type ForkRequest struct {
	Round      int            `json:"round"`
	Step       int            `json:"step"`
	Selection  *ForkSelection `json:"selection,omitempty"`
	Parameters map[string]any `json:"parameters,omitempty"`
}

// ForkSelection is an edited Stage 1 selection.
type ForkSelection struct {
	Action                 string      `json:"action"`
	ActionObjective        string      `json:"actionObjective,omitempty"`
	RequiredInputDocuments []string    `json:"requiredInputDocuments,omitempty"`
	RequiredConnection     string      `json:"requiredConnection,omitempty"`
	ParametersContext      string      `json:"parametersContext,omitempty"`
	ParametersSchema       FieldsAsked `json:"parametersSchema"`
}

// FieldsAsked lists the parameters a selection asks Stage 2 to fill.
type FieldsAsked struct {
	Fields []FieldSpec `json:"fields,omitempty"`
}

// FieldSpec is one parameter a selection asks for: its type is one of
// string, number, boolean, enum, object.
type FieldSpec struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Required    bool   `json:"required,omitempty"`
	Description string `json:"description,omitempty"`
}

// QueuedRound is a round waiting for the workflow's current round.
type QueuedRound struct {
	MessageID string     `json:"messageId"` // its user message's id once it starts
	Round     int        `json:"round"`     // the round number it will run as
	Title     string     `json:"title"`
	Documents []Document `json:"documents"`
	Interrupt bool       `json:"interrupt"` // it ends the running round at its next safe point
	QueuedAt  time.Time  `json:"queuedAt"`
}

// Running reports whether the round is still running (not ended and not
// paused for approval).
func (w *Workflow) Running() bool { return w.Status == "running" }

// Stats counts a workflow's model calls, tokens and actions.
type Stats struct {
	LLMCalls         int `json:"llmCalls"`
	PromptTokens     int `json:"promptTokens"`
	CompletionTokens int `json:"completionTokens"`
	Actions          int `json:"actions"`
	// ByStage splits the calls and tokens by stage (stage1, stage2, plan,
	// repair, action).
	ByStage map[string]StageStats `json:"byStage"`
}

// StageStats counts one stage's model calls and tokens.
type StageStats struct {
	Calls            int `json:"calls"`
	PromptTokens     int `json:"promptTokens"`
	CompletionTokens int `json:"completionTokens"`
	// CachedTokens is how many of PromptTokens the provider served from
	// its prompt cache.
	CachedTokens int `json:"cachedTokens"`
}

// PendingApproval is the step a paused round waits on; decide it with
// Client.Decide.
type PendingApproval struct {
	ID              string         `json:"id"`
	Round           int            `json:"round"`
	Step            int            `json:"step"`
	Action          string         `json:"action"`
	ActionObjective string         `json:"actionObjective"`
	Parameters      map[string]any `json:"parameters"`
	Documents       []string       `json:"documents"`
	Connection      string         `json:"connection"`
	Effect          string         `json:"effect"`
	RequestedAt     time.Time      `json:"requestedAt"`
	ExpiresAt       time.Time      `json:"expiresAt"`
	// Kind is call (approve the filled call) or intent (approve Stage 1's
	// decision before Stage 2: Parameters is nil, ParametersContext and
	// Fields say what Stage 2 will fill; narrow it with
	// Decision.Constraints).
	Kind              string      `json:"kind"`
	ParametersContext string      `json:"parametersContext,omitempty"`
	Fields            []FieldSpec `json:"fields,omitempty"`
}

// StandingApproval is a decision kept with Decision.Remember: later calls
// of Action it admits (satisfying Constraints, kind intent, or repeating
// Parameters, kind call) run without a pause.
type StandingApproval struct {
	ID          string                    `json:"id"`
	Action      string                    `json:"action"`
	Kind        string                    `json:"kind"`
	Scope       string                    `json:"scope"` // workflow or user
	WorkflowID  string                    `json:"workflowId,omitempty"`
	Constraints map[string]map[string]any `json:"constraints,omitempty"`
	Parameters  map[string]any            `json:"parameters,omitempty"`
	GrantedBy   string                    `json:"grantedBy"`
	GrantedAt   time.Time                 `json:"grantedAt"`
	ExpiresAt   *time.Time                `json:"expiresAt,omitempty"`
	Uses        int64                     `json:"uses"`
}

// ApprovedBy names the standing approval that let a call run without a
// pause and the person who granted it.
type ApprovedBy struct {
	StandingApprovalID string `json:"standingApprovalId"`
	GrantedBy          string `json:"grantedBy"`
}

// Message is one record of a workflow: a user prompt, an action's result,
// an assistant answer or a history compaction's summary.
type Message struct {
	ID              string         `json:"id"`
	Seq             int64          `json:"seq"`
	Round           int            `json:"round"`
	Step            int            `json:"step"`
	Role            string         `json:"role"` // user, action, assistant, summary
	Text            string         `json:"text"`
	Action          string         `json:"action"`
	ActionObjective string         `json:"actionObjective"`
	Parameters      map[string]any `json:"parameters"`
	Status          string         `json:"status"` // success, error, rejected (action messages)
	DocumentsLabel  string         `json:"documentsLabel"`
	Documents       []Document     `json:"documents"`
	Summary         string         `json:"summary"`
	Findings        string         `json:"findings"`
	Learnings       []string       `json:"learnings"`
	// CompactedThrough, on a summary message, is the seq of the newest
	// message its text summarises.
	CompactedThrough int64 `json:"compactedThrough,omitempty"`
	// ApprovedBy, on an action message, is set when a standing approval
	// let the call run without a pause.
	ApprovedBy *ApprovedBy `json:"approvedBy,omitempty"`
	CreatedAt  time.Time   `json:"createdAt"`
}

// Document is a document's metadata; Client.Document reads its bytes.
type Document struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	MimeType string `json:"mimeType"`
	Size     int64  `json:"size"`
}

// Action is an action the gateway offers.
type Action struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Effect      string          `json:"effect"`
	// Connection is the kind of connection the action uses ("" for none);
	// ConnectionRequired says it must be given.
	Connection         string `json:"connection"`
	ConnectionRequired bool   `json:"connectionRequired"`
	// Documents is none, optional or required.
	Documents string `json:"documents"`
	// Server names the MCP server whose tool the action is, or the
	// openapiActions entry whose operation it is ("" for the gateway's own
	// actions).
	Server string `json:"server,omitempty"`
	// HTTPMethod and HTTPPath are an OpenAPI operation's method and path
	// template ("" for other actions).
	HTTPMethod string `json:"httpMethod,omitempty"`
	HTTPPath   string `json:"httpPath,omitempty"`
}
