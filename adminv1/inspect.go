package adminv1

import "encoding/json"

// RenderBody is the body of POST /admin/v1/workflows/{id}/render.
type RenderBody struct {
	Stage    string   `json:"stage" enum:"stage1,stage2,plan" doc:"Which prompt to render"`
	Template string   `json:"template,omitempty" maxLength:"262144" doc:"A template source to render instead of the gateway's (same syntax and key rules as a *.tmpl file)"`
	Feedback []string `json:"feedback,omitempty" maxItems:"50" doc:"Problem lines of a rejected attempt, to render the retry that carries them as VALIDATION_FEEDBACK"`
}

// RenderResult is a fully rendered prompt: the bytes the engine would send
// for the workflow's current state, and the text of every placeholder.
type RenderResult struct {
	Stage        string            `json:"stage"`
	Template     string            `json:"template" doc:"The template rendered (its name; an override keeps the stage's name)"`
	Prompt       []PromptMessage   `json:"prompt"`
	Placeholders map[string]string `json:"placeholders"`
	// Selection and Source say which Stage 1 selection a stage2 render used.
	Selection *Selection `json:"selection,omitempty" doc:"The Stage 1 selection Stage 2 was rendered from"`
	Source    string     `json:"source,omitempty" doc:"Where the selection came from: checkpoint, trace <id>, or message <id> (partial)"`
}

// ReplayBody is the body of POST /admin/v1/traces/{traceId}/replay.
type ReplayBody struct {
	Prompt []ReplayMessage `json:"prompt,omitempty" maxItems:"20" doc:"An edited prompt to send instead of the recorded one"`
}

// ReplayMessage is one chat message of an edited prompt.
type ReplayMessage struct {
	Role    string `json:"role" enum:"system,user,assistant"`
	Content string `json:"content" minLength:"1"`
}

// ReplayResult is the model's answer now, parsed and validated the way the
// trace's stage parses it. A model failure is a result too (Error set), not
// an HTTP error: the replay itself worked.
type ReplayResult struct {
	Response         string          `json:"response"`
	Parsed           json.RawMessage `json:"parsed" doc:"The extracted JSON of the reply; null when none was found"`
	Error            string          `json:"error" doc:"Rejection lines or the model error; empty when the reply is accepted"`
	Note             string          `json:"note,omitempty" doc:"What the parse could not check"`
	Ungrounded       []string        `json:"ungrounded,omitempty" nullable:"false" doc:"Stage 2 only: the paths of the reply's values that appear in neither the objective nor the parameters context (docs/grounding.md), as its trace would list them; absent when none"`
	Model            string          `json:"model"`
	PromptTokens     int             `json:"promptTokens"`
	CompletionTokens int             `json:"completionTokens"`
	CachedTokens     int             `json:"cachedTokens" doc:"Prompt tokens the provider served from its prompt cache"`
	LatencyMs        int64           `json:"latencyMs"`
	OutputMode       string          `json:"outputMode" doc:"How the replay asked for its reply (tool, json_schema, json_object, text): a Stage 1 or Stage 2 replay sends the stage's schema as the engine does"`
}
