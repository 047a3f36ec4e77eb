package qualify

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/twostep/twostep/economy"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/workflow"
)

// Call is one model call of a case and what its reply did.
type Call struct {
	Model     string   `json:"model,omitempty"`
	LatencyMs int64    `json:"latencyMs"`
	Tokens    Tokens   `json:"tokens"`
	USD       *float64 `json:"usd,omitempty"`
	// Error is the model's error (no reply); Truncated a reply cut at the
	// token limit (never parsed); InvalidJSON a reply with no JSON object.
	Error       string `json:"error,omitempty"`
	Truncated   bool   `json:"truncated,omitempty"`
	InvalidJSON bool   `json:"invalidJSON,omitempty"`
	// ParametersKey (Stage 1) is a reply with a "parameters" key;
	// Forbidden a Stage 1 field or Stage 2 key named like a forbidden field
	// (workflow.IsForbiddenField).
	ParametersKey bool `json:"parametersKey,omitempty"`
	Forbidden     bool `json:"forbidden,omitempty"`
	// SchemaValid (Stage 2) is a reply whose parameters pass the action's
	// JSON Schema.
	SchemaValid bool `json:"schemaValid,omitempty"`
	// Problems are the reply's rejections, fed back on the next try.
	Problems []string `json:"problems,omitempty"`
}

// CaseResult is one case's outcome. The checks (Action … Ungrounded) are
// made on the case's last reply, accepted or not; Passed needs it
// accepted as well.
type CaseResult struct {
	ID        string         `json:"id"`
	Stage     workflow.Stage `json:"stage"`
	Situation string         `json:"situation"`
	Passed    bool           `json:"passed"`
	// AcceptedAt is the try whose reply was accepted (1: the first; 0:
	// none was).
	AcceptedAt int `json:"acceptedAt"`
	// Stopped says why the case made fewer calls than it needed (the run's
	// --max-calls spent, the run cancelled); Error a model that could not
	// answer or a prompt that could not be rendered.
	Stopped string `json:"stopped,omitempty"`
	Error   string `json:"error,omitempty"`
	Calls   []Call `json:"calls"`
	// Stage 1: the choice and whether it is the expected one.
	Selection  *workflow.Selection `json:"selection,omitempty"`
	Action     bool                `json:"action"`
	References bool                `json:"references"`
	Fields     bool                `json:"fields"`
	Carried    bool                `json:"carried"`
	// Stage 2: the parameters, whether they equal the expected ones, and
	// the paths of the values found nowhere in what Stage 2 was shown.
	Parameters map[string]any `json:"parameters,omitempty"`
	Values     bool           `json:"values"`
	Ungrounded []string       `json:"ungrounded,omitempty"`
}

// Tokens are the tokens of one or more calls: every prompt token
// (Input), the part of them the provider's cache served (Cached), and the
// completion's (Output).
type Tokens struct {
	Input  int `json:"input"`
	Cached int `json:"cached"`
	Output int `json:"output"`
}

// economy returns t as the economy package counts tokens.
func (t Tokens) economy() economy.Tokens {
	return economy.Tokens{Input: t.Input, Cached: t.Cached, Output: t.Output}
}

// hasKey reports whether the JSON object raw has a key that matches.
func hasKey(raw json.RawMessage, match func(string) bool) bool {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return false
	}
	for k := range obj {
		if match(k) {
			return true
		}
	}
	return false
}

// classify1 records what a parsed Stage 1 reply carries.
func classify1(c *Call, text string) {
	raw, err := prompts.ExtractObject(text)
	if err != nil {
		c.InvalidJSON = true
		return
	}
	c.ParametersKey = hasKey(raw, func(k string) bool { return strings.EqualFold(k, "parameters") })
	var obj struct {
		ParametersSchema struct {
			Fields []json.RawMessage `json:"fields"`
		} `json:"parametersSchema"`
	}
	_ = json.Unmarshal(raw, &obj)
	for _, f := range obj.ParametersSchema.Fields {
		var field struct {
			Name string `json:"name"`
		}
		var name string
		if json.Unmarshal(f, &field) == nil {
			name = field.Name
		} else {
			_ = json.Unmarshal(f, &name) // a field given by its name alone
		}
		c.Forbidden = c.Forbidden || workflow.IsForbiddenField(name)
	}
}

// compactJSON is v as compact JSON (its Go form when it has none).
func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
