package workflow

import "encoding/json"

// OutputMode is how a model call asks its provider for a structured reply
// (DESIGN §9.2). The trace records the mode each call was sent with.
type OutputMode string

// The output modes, strongest first.
const (
	// OutputTool forces one tool (function) call whose arguments are the
	// reply; the tool's parameters are the stage's OutputSchema.
	OutputTool OutputMode = "tool"
	// OutputJSONSchema sends the stage's OutputSchema as the response format.
	OutputJSONSchema OutputMode = "json_schema"
	// OutputJSONObject asks for any JSON object (the prompt gives its shape).
	OutputJSONObject OutputMode = "json_object"
	// OutputText asks for nothing: the prompt alone asks for JSON.
	OutputText OutputMode = "text"
)

// Native reports whether the provider was given the reply's schema (tool or
// json_schema) rather than only the prompt's description of it.
func (m OutputMode) Native() bool { return m == OutputTool || m == OutputJSONSchema }

// Valid reports whether m is one of the four output modes.
func (m OutputMode) Valid() bool {
	switch m {
	case OutputTool, OutputJSONSchema, OutputJSONObject, OutputText:
		return true
	}
	return false
}

// OutputSchema is the JSON Schema a stage's reply must match, for providers
// that enforce one (a forced tool call or a json_schema response format).
// The schema only narrows what the model may write: the stage's parser
// validates the reply exactly as strictly whatever the provider enforced.
type OutputSchema struct {
	// Name names the tool or the response format (^[A-Za-z0-9_-]{1,64}$).
	Name string
	// Description tells the model what the tool's arguments are.
	Description string
	// Schema is the reply's JSON Schema (an object schema). When Strict, it
	// follows OpenAI's strict-mode rules: every property required (the
	// optional ones nullable), "additionalProperties": false on every
	// object, only keywords strict mode takes.
	Schema json.RawMessage
	// Strict reports that Schema follows the strict-mode rules; when false,
	// NotStrict names the construct that prevents it, so a provider that
	// needs strict mode falls back with that reason in its log line.
	Strict    bool
	NotStrict string
}
