package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/twostep/twostep/workflow"
)

// EchoAction is the name of the echo tool in twostep's registry.
const EchoAction = "text.echo"

// registry is a workflow.Registry of two actions, the echo tool and
// workflow.complete, each with a JSON Schema compiled once and validated
// on every call, as the gateway's actions.Registry does. It records the
// echo tool's inputs and nothing else, so it does not grow with the runs.
type registry struct {
	specs   []workflow.ActionSpec
	schemas map[string]*jsonschema.Schema
	log     *echoLog
}

var _ workflow.Registry = (*registry)(nil)

// stringParam is the schema of an object with one required string property.
func stringParam(name string) string {
	return fmt.Sprintf(`{"type":"object","additionalProperties":false,"required":[%q],"properties":{%q:{"type":"string","description":"the %s"}}}`, name, name, name)
}

func newRegistry(log *echoLog) (*registry, error) {
	r := &registry{log: log, schemas: map[string]*jsonschema.Schema{}, specs: []workflow.ActionSpec{
		{Name: EchoAction, Description: "Returns its text unchanged.", Parameters: json.RawMessage(stringParam("text")),
			Effect: workflow.EffectRead, Documents: workflow.DocumentsNone},
		{Name: workflow.CompleteAction, Description: "Ends the round with a final answer.", Parameters: json.RawMessage(stringParam("message")),
			Effect: workflow.EffectRead, Documents: workflow.DocumentsNone},
	}}
	for _, s := range r.specs {
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(s.Parameters)))
		if err != nil {
			return nil, err
		}
		c := jsonschema.NewCompiler()
		url := "mem:///bench/" + s.Name + ".json"
		if err := c.AddResource(url, doc); err != nil {
			return nil, err
		}
		if r.schemas[s.Name], err = c.Compile(url); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Actions returns both specs, sorted by name.
func (r *registry) Actions() []workflow.ActionSpec { return r.specs }

// Action returns one spec by name.
func (r *registry) Action(name string) (workflow.ActionSpec, bool) {
	for _, s := range r.specs {
		if s.Name == name {
			return s, true
		}
	}
	return workflow.ActionSpec{}, false
}

// ValidateParameters validates params against the action's compiled schema.
func (r *registry) ValidateParameters(name string, params map[string]any) []string {
	s, ok := r.schemas[name]
	if !ok {
		return []string{fmt.Sprintf("/: unknown action %q", name)}
	}
	if err := s.Validate(map[string]any(params)); err != nil {
		return []string{"/: " + err.Error()}
	}
	return nil
}

// Execute runs the echo tool.
func (r *registry) Execute(_ context.Context, call workflow.ActionCall) (workflow.ActionResult, error) {
	if call.Action != EchoAction {
		return workflow.ActionResult{}, workflow.Errorf(workflow.KindInvalid, "%s cannot be executed", call.Action)
	}
	text, _ := call.Parameters["text"].(string)
	r.log.add(text)
	return workflow.ActionResult{Text: text}, nil
}

// Connections returns none.
func (r *registry) Connections(string) []workflow.Connection { return nil }
