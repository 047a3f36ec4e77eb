package apiv1

import "time"

// WorkflowView is a workflow as the API shows it (DESIGN §6): the stored
// form without its version, checkpoint and trace context.
type WorkflowView struct {
	ID         string    `json:"id"`
	UserID     string    `json:"userId"`
	Mode       string    `json:"mode" enum:"react,actionplan"`
	Status     string    `json:"status" enum:"running,awaiting_approval,completed,failed,stopped"`
	StopReason string    `json:"stopReason"`
	Round      int       `json:"round"`
	Step       int       `json:"step"`
	MaxSteps   int       `json:"maxSteps"`
	Title      string    `json:"title" doc:"The first line of the first prompt (at most 100 characters)"`
	Error      string    `json:"error"`
	Stats      Stats     `json:"stats"`
	CreatedAt  time.Time `json:"createdAt"`
	UpdatedAt  time.Time `json:"updatedAt"`
	// PendingApproval is the step a paused round waits on.
	PendingApproval *PendingApproval `json:"pendingApproval,omitempty" doc:"The step an awaiting_approval round waits on: decide it at approvals/{id}"`
	// ForkedFrom is set on a workflow made by POST .../fork.
	ForkedFrom *ForkOrigin `json:"forkedFrom,omitempty" doc:"On a fork: the workflow and step it was forked from"`
	// QueuedRounds wait for the current round, in run order (rounds sent
	// with onBusy=enqueue or interrupt while one ran).
	QueuedRounds []QueuedRoundView `json:"queuedRounds" doc:"Rounds sent with onBusy=enqueue or interrupt that wait for the current round, in the order they will run; empty when none"`
}

// Running reports whether the round is still running (not ended and not
// paused for approval).
func (w *WorkflowView) Running() bool { return w.Status == "running" }

// Stats counts a workflow's model calls, tokens and actions over all its
// rounds.
type Stats struct {
	LLMCalls         int `json:"llmCalls"`
	PromptTokens     int `json:"promptTokens"`
	CompletionTokens int `json:"completionTokens"`
	Actions          int `json:"actions"`
	// DiscardedCalls counts the early Stage 2 calls not used.
	DiscardedCalls int `json:"discardedCalls,omitempty" doc:"Stage 2 calls started while Stage 1 still streamed whose reply was not used (design §11.2); counted in llmCalls and the tokens too; absent when none"`
	// ByStage splits the calls and tokens by stage; never null.
	ByStage map[string]StageStats `json:"byStage" doc:"Model calls and tokens by stage (stage1, stage2, plan, repair, compact, action); summed they equal llmCalls and the token totals"`
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

// ForkOrigin names the workflow and the step a fork was made from.
type ForkOrigin struct {
	WorkflowID string `json:"workflowId"`
	Round      int    `json:"round"`
	Step       int    `json:"step"`
}

// QueuedRoundView is a round waiting for the current one (onBusy=enqueue
// or interrupt).
type QueuedRoundView struct {
	MessageID string         `json:"messageId" doc:"The id its user message will have when it starts"`
	Round     int            `json:"round" doc:"The round number it will run as"`
	Title     string         `json:"title" doc:"The first line of its prompt (at most 100 characters)"`
	Documents []DocumentView `json:"documents"`
	Interrupt bool           `json:"interrupt" doc:"It stops the running round at its next safe point instead of waiting for it to end"`
	QueuedAt  time.Time      `json:"queuedAt"`
}

// WorkflowList is a page of the user's workflows, newest first.
type WorkflowList struct {
	Workflows  []WorkflowView `json:"workflows"`
	NextCursor string         `json:"nextCursor" doc:"Cursor of the next page; empty on the last page"`
}

// WorkflowResult is a workflow and, when the request waited for its round
// (Prefer: wait) and the round settled in time, the round's messages: the
// answer of creating a workflow, starting a round and deciding an
// approval.
type WorkflowResult struct {
	WorkflowView
	Messages []MessageView `json:"messages,omitempty" doc:"With Prefer: wait, when the round ended or paused in time: the round's messages in seq order"`
	// WebhookSecret is answered once, by the create that asked for a
	// webhook.
	WebhookSecret string `json:"webhookSecret,omitempty" doc:"The create's answer only, when it asked for a webhook: the secret (whsec_...) its deliveries are signed with; it is never shown again"`
}

// CreateWorkflowBody is the body of POST /api/v1/workflows.
type CreateWorkflowBody struct {
	Prompt    string          `json:"prompt" minLength:"1" doc:"What the user wants done"`
	Mode      string          `json:"mode,omitempty" enum:"react,actionplan" doc:"How rounds run (default react)"`
	MaxSteps  int             `json:"maxSteps,omitempty" minimum:"1" maximum:"100" doc:"Step limit per round (default from GATEWAY_MAX_STEPS)"`
	Documents []DocumentInput `json:"documents,omitempty" doc:"Documents for the first round"`
	Webhook   *WebhookInput   `json:"webhook,omitempty" doc:"Where to post the workflow's round events (Standard Webhooks); the signing secret is answered once, as webhookSecret"`
}

// NewRoundBody is the body of POST /api/v1/workflows/{id}/rounds.
type NewRoundBody struct {
	Prompt    string          `json:"prompt" minLength:"1" doc:"The next user prompt"`
	Documents []DocumentInput `json:"documents,omitempty" doc:"Documents for this round"`
}

// DocumentInput is an uploaded document: a file name, its media type and
// its bytes in standard base64.
type DocumentInput struct {
	Name     string `json:"name" minLength:"1" maxLength:"255" doc:"File name: no path separators, '..' or control characters" example:"notes.txt"`
	MimeType string `json:"mimeType,omitempty" maxLength:"255" doc:"Media type; derived from the name when omitted" example:"text/plain"`
	Content  string `json:"content" contentEncoding:"base64" doc:"The bytes, standard base64 (empty for an empty file)"`
}

// WebhookInput asks for a workflow's round events (DESIGN §10.3).
type WebhookInput struct {
	URL    string   `json:"url" minLength:"1" maxLength:"2048" doc:"Where deliveries are posted (http or https; private and loopback addresses are refused unless the operator allows them)"`
	Events []string `json:"events,omitempty" maxItems:"4" doc:"The events wanted (round.completed, round.failed, round.stopped, round.awaiting_approval); default all" enum:"round.completed,round.failed,round.stopped,round.awaiting_approval"`
}

// WebhookEvent is the body of a webhook delivery: the event type, when it
// happened and the workflow as the API shows it.
type WebhookEvent struct {
	Type      string    `json:"type"`
	Timestamp time.Time `json:"timestamp"`
	Data      struct {
		Workflow WorkflowView `json:"workflow"`
	} `json:"data"`
}
