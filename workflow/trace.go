package workflow

import (
	"encoding/json"
	"time"
)

// Stage names the kind of model call (or action) a trace records.
type Stage string

// The trace stages of DESIGN §6.
const (
	StageOne    Stage = "stage1"
	StageTwo    Stage = "stage2"
	StagePlan   Stage = "plan"
	StageRepair Stage = "repair"
	StageAction Stage = "action"
	// StageCompact is React mode's history compaction call: a summary of
	// the history entries about to leave the Stage 1 budget.
	StageCompact Stage = "compact"
)

// The roles of a PromptMessage: the chat roles every provider accepts,
// and the roles a template section may speak for (templates).
const (
	PromptSystem    = "system"
	PromptUser      = "user"
	PromptAssistant = "assistant"
)

// PromptMessage is one chat message sent to a model; Role is one of
// PromptSystem, PromptUser, PromptAssistant.
type PromptMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Trace records one model call: the rendered prompt, the raw response, the
// parse outcome, tokens and latency. Traces are redacted before they are
// stored: they never carry a secret.
type Trace struct {
	ID         string `json:"id"`
	WorkflowID string `json:"workflowId"`
	Round      int    `json:"round"`
	Step       int    `json:"step"`
	Stage      Stage  `json:"stage"`
	Attempt    int    `json:"attempt"`
	Template   string `json:"template"`
	// Inputs are the placeholder values a Stage 1 or Stage 2 prompt was
	// rendered from (redacted as the prompt is), so the call can be
	// rendered again from another template (datasets, experiments); nil on
	// the other stages and on traces stored before the field existed.
	Inputs           map[string]string `json:"inputs,omitempty"`
	Prompt           []PromptMessage   `json:"prompt"`
	Response         string            `json:"response"`
	Parsed           json.RawMessage   `json:"parsed,omitempty"`
	Error            string            `json:"error"`
	Model            string            `json:"model"`
	PromptTokens     int               `json:"promptTokens"`
	CompletionTokens int               `json:"completionTokens"`
	// CachedTokens is how many of PromptTokens the provider served from
	// its prompt cache (ModelResponse.CachedTokens; 0 when it reported
	// none, and on traces stored before the field existed).
	CachedTokens int `json:"cachedTokens"`
	// CacheWriteTokens is how many prompt tokens the provider wrote to its
	// cache (Anthropic's cache_creation_input_tokens; 0 elsewhere).
	CacheWriteTokens int   `json:"cacheWriteTokens,omitempty"`
	LatencyMs        int64 `json:"latencyMs"`
	// StartedAtMs is when the call started, in milliseconds after the
	// start of its round step's first model call (0 for that one), as
	// measured by the instance that made it (DESIGN §11.2).
	StartedAtMs int64 `json:"startedAtMs"`
	// OverlapMs is, for a Stage 2 call started while Stage 1's reply
	// still streamed, how long the two ran side by side; 0 otherwise.
	OverlapMs int64 `json:"overlapMs,omitempty"`
	// Discarded marks such an early Stage 2 call whose reply was not
	// used: Stage 1's reply was then rejected, or accepted with other
	// values. Its tokens count like any call's.
	Discarded bool `json:"discarded,omitempty"`
	// FinishReason is the provider's own reason the reply ended ("stop",
	// "length", "end_turn", "max_tokens"; "" when it gave none).
	FinishReason string `json:"finishReason,omitempty"`
	// Retries counts the provider failures the adapter retried before the
	// answer (or before giving up).
	Retries int `json:"retries,omitempty"`
	// OutputMode is how the call asked for a structured reply: tool,
	// json_schema, json_object or text (DESIGN §9.2); "" only on traces
	// that record no model call (a dropped plan step).
	OutputMode OutputMode `json:"outputMode,omitempty"`
	// Ungrounded lists the paths of the Stage 2 values that appear
	// nowhere in what Stage 2 was shown ("ticketId", "lines[1].sku";
	// prompts.Ungrounded, DESIGN §10.4), whether or not the reply was
	// rejected for them; nil for every other trace.
	Ungrounded []string  `json:"ungrounded,omitempty"`
	CreatedAt  time.Time `json:"createdAt"`
}
