package adminv1

import (
	"encoding/json"
	"time"

	"github.com/twostep/twostep/apiv1"
)

// AdminWorkflowView is a workflow as an admin sees it: the API view plus
// the checkpoint of its current step (phase, Stage 1 selection, parameters).
type AdminWorkflowView struct {
	apiv1.WorkflowView
	Checkpoint *CheckpointView `json:"checkpoint" doc:"The persisted phase of the step the round runs or would resume from: kept while it runs or awaits approval and after it stopped or failed (resume goes on from it); null once a round completed"`
	// TraceContext finds the round in the tracing backend (docs/observability.md).
	TraceContext TraceContext `json:"traceContext" doc:"W3C traceparents of the request that started the round (origin) and of its last run's round span (round); empty when tracing is off"`
}

// AdminWorkflowList is a page of workflows, newest first.
type AdminWorkflowList struct {
	Workflows  []AdminWorkflowView `json:"workflows"`
	NextCursor string              `json:"nextCursor" doc:"Cursor of the next page; empty on the last page"`
}

// TraceView is a trace as DESIGN §6 shows it.
type TraceView struct {
	ID               string          `json:"id"`
	WorkflowID       string          `json:"workflowId"`
	Round            int             `json:"round"`
	Step             int             `json:"step"`
	Stage            string          `json:"stage" enum:"stage1,stage2,plan,repair,action,compact"`
	Attempt          int             `json:"attempt"`
	Template         string          `json:"template"`
	Prompt           []PromptMessage `json:"prompt"`
	Response         string          `json:"response"`
	Parsed           json.RawMessage `json:"parsed" doc:"The extracted JSON of the reply; null when none was found"`
	Error            string          `json:"error" doc:"The rejection or model error; empty when the reply was accepted"`
	Model            string          `json:"model"`
	PromptTokens     int             `json:"promptTokens"`
	CompletionTokens int             `json:"completionTokens"`
	CachedTokens     int             `json:"cachedTokens" doc:"Prompt tokens the provider served from its prompt cache (0 when it reported none)"`
	CacheWriteTokens int             `json:"cacheWriteTokens,omitempty" doc:"Prompt tokens the provider wrote to its cache (Anthropic); absent when none"`
	LatencyMs        int64           `json:"latencyMs"`
	StartedAtMs      int64           `json:"startedAtMs" doc:"When the call started, in milliseconds after the start of its round step's first model call (0 for that one)"`
	OverlapMs        int64           `json:"overlapMs,omitempty" doc:"A Stage 2 call started while Stage 1's reply still streamed: how long the two ran side by side; absent otherwise"`
	Discarded        bool            `json:"discarded,omitempty" doc:"Such an early Stage 2 call whose reply was not used (Stage 1's reply was rejected, or accepted with other values); its tokens count like any call's"`
	FinishReason     string          `json:"finishReason" doc:"The provider's reason the reply ended (stop, length, end_turn, max_tokens); empty when it gave none"`
	Retries          int             `json:"retries" doc:"Provider failures (429, 5xx, timeouts) retried before this answer"`
	OutputMode       string          `json:"outputMode" doc:"How the call asked for a structured reply: tool (a forced tool call), json_schema (a response format with the stage's schema), json_object or text; empty on a trace that records no model call, or one stored before the field existed"`
	Ungrounded       []string        `json:"ungrounded,omitempty" nullable:"false" doc:"Stage 2 only: the paths of the values (ticketId, lines[1].sku) that appear in neither the objective nor the parameters context Stage 2 was shown (docs/grounding.md); absent when none"`
	CreatedAt        time.Time       `json:"createdAt"`
}

// TraceList is a workflow's traces, oldest first.
type TraceList struct {
	Traces []TraceView `json:"traces"`
}

// TemplateView is one prompt template of the running gateway.
type TemplateView struct {
	Name   string   `json:"name"`
	Keys   []string `json:"keys" doc:"The placeholders the template uses"`
	Source string   `json:"source"`
}

// TemplateList lists the gateway's templates by name.
type TemplateList struct {
	Templates []TemplateView `json:"templates"`
}

// TraceContext holds the W3C traceparents that find a round in the
// tracing backend (workflow.TraceContext): the request that started it
// and its last run's round span.
type TraceContext struct {
	Origin string `json:"origin,omitempty"`
	Round  string `json:"round,omitempty"`
}

// PromptMessage is one chat message of a rendered prompt
// (workflow.PromptMessage).
type PromptMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}
