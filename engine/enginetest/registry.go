package enginetest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/twostep/twostep/workflow"
)

// The test actions of NewRegistry.
const (
	// Echo returns its "text" parameter and one document "echo.txt" holding it.
	Echo = "test.echo"
	// Broken always fails with an explained error.
	Broken = "test.broken"
	// Remote needs a connection of kind "http".
	Remote = "test.remote"
)

// Registry is a fake workflow.Registry. Execute runs ExecuteFunc when set,
// else the built-in behaviour of the test actions; every call is recorded.
type Registry struct {
	Specs       []workflow.ActionSpec
	Conns       map[string][]workflow.Connection
	ExecuteFunc func(ctx context.Context, call workflow.ActionCall) (workflow.ActionResult, error)

	mu    sync.Mutex
	calls []workflow.ActionCall
}

var _ workflow.Registry = (*Registry)(nil)

// NewRegistry returns a registry with Echo, Broken, Remote and
// workflow.complete, and one connection "crm" for user "alice".
func NewRegistry() *Registry {
	str := func(req ...string) json.RawMessage {
		b, _ := json.Marshal(map[string]any{
			"type": "object", "required": req, "additionalProperties": false,
			"properties": map[string]any{"text": map[string]any{"type": "string"}, "message": map[string]any{"type": "string"}},
		})
		return b
	}
	return &Registry{
		Specs: []workflow.ActionSpec{
			{Name: Broken, Description: "Always fails.", Parameters: str(), Effect: workflow.EffectRead, Documents: workflow.DocumentsNone},
			{Name: Echo, Description: "Echoes text into a document.", Parameters: str("text"), Effect: workflow.EffectRead, Documents: workflow.DocumentsOptional},
			{Name: Remote, Description: "Calls a remote system.", Parameters: str(), Effect: workflow.EffectWrite, Documents: workflow.DocumentsNone, ConnectionKind: "http", ConnectionRequired: true},
			{Name: workflow.CompleteAction, Description: "Ends the round with a final answer.", Parameters: str("message"), Effect: workflow.EffectRead, Documents: workflow.DocumentsNone},
		},
		Conns: map[string][]workflow.Connection{"alice": {{Label: "crm", Kind: "http", Description: "the CRM"}}},
	}
}

// Actions returns the specs sorted by name.
func (r *Registry) Actions() []workflow.ActionSpec {
	s := slices.Clone(r.Specs)
	sort.Slice(s, func(i, j int) bool { return s[i].Name < s[j].Name })
	return s
}

// Action returns one spec by name.
func (r *Registry) Action(name string) (workflow.ActionSpec, bool) {
	for _, s := range r.Specs {
		if s.Name == name {
			return s, true
		}
	}
	return workflow.ActionSpec{}, false
}

// ValidateParameters checks required properties, string types and unknown
// keys against the spec's schema (enough of JSON Schema for the tests).
func (r *Registry) ValidateParameters(name string, params map[string]any) []string {
	spec, ok := r.Action(name)
	if !ok {
		return []string{fmt.Sprintf("/: unknown action %q", name)}
	}
	var schema struct {
		Required   []string                  `json:"required"`
		Properties map[string]map[string]any `json:"properties"`
	}
	_ = json.Unmarshal(spec.Parameters, &schema)
	var out []string
	for _, req := range schema.Required {
		if _, ok := params[req]; !ok {
			out = append(out, fmt.Sprintf("/: missing property %q", req))
		}
	}
	for k, v := range params {
		if _, ok := schema.Properties[k]; !ok {
			out = append(out, fmt.Sprintf("/%s: additional property not allowed", k))
		} else if _, isStr := v.(string); !isStr {
			out = append(out, fmt.Sprintf("/%s: want string", k))
		}
	}
	sort.Strings(out)
	return out
}

// Execute records call and runs the action.
func (r *Registry) Execute(ctx context.Context, call workflow.ActionCall) (workflow.ActionResult, error) {
	r.mu.Lock()
	r.calls = append(r.calls, call)
	r.mu.Unlock()
	if r.ExecuteFunc != nil {
		return r.ExecuteFunc(ctx, call)
	}
	switch call.Action {
	case Echo:
		text, _ := call.Parameters["text"].(string)
		return workflow.ActionResult{Text: text, Documents: []workflow.DocumentContent{{
			Document: workflow.Document{Name: "echo.txt", MimeType: "text/plain"}, Content: []byte(text),
		}}}, nil
	case Remote:
		return workflow.ActionResult{Text: "remote ok via " + call.Connection.Label}, nil
	}
	return workflow.ActionResult{}, workflow.Errorf(workflow.KindInvalid, "%s failed on purpose", call.Action)
}

// Connections returns userID's connections.
func (r *Registry) Connections(userID string) []workflow.Connection {
	return slices.Clone(r.Conns[userID])
}

// Calls returns the recorded executions, in order.
func (r *Registry) Calls() []workflow.ActionCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}
