package qualify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/twostep/twostep/workflow"
)

// Catalogue is a case's actions and connections: the workflow.Registry its
// replies are parsed and validated against. Parameters are validated
// against each action's JSON Schema (draft 2020-12, no external $ref), as
// the gateway's registry does; nothing is ever executed.
type Catalogue struct {
	specs   []workflow.ActionSpec
	schemas map[string]*jsonschema.Schema
	conns   []workflow.Connection
}

var _ workflow.Registry = (*Catalogue)(nil)

// completeSpec is the reserved action every catalogue offers.
var completeSpec = workflow.ActionSpec{
	Name:        workflow.CompleteAction,
	Description: "Ends the round with the final answer to the user.",
	Parameters: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["message"],` +
		`"properties":{"message":{"type":"string","description":"the answer shown to the user"}}}`),
	Effect: workflow.EffectRead, Documents: workflow.DocumentsNone,
}

// catalogueSource is one entry of catalogues.json.
type catalogueSource struct {
	Actions     []workflow.ActionSpec `json:"actions"`
	Connections []workflow.Connection `json:"connections"`
}

// NewCatalogue compiles specs (workflow.complete added when absent) with
// conns. It fails on a schema that does not compile.
func NewCatalogue(specs []workflow.ActionSpec, conns []workflow.Connection) (*Catalogue, error) {
	c := &Catalogue{schemas: map[string]*jsonschema.Schema{}, conns: slices.Clone(conns)}
	for _, s := range append(slices.Clone(specs), completeSpec) {
		if _, ok := c.schemas[s.Name]; ok {
			continue // the case's own workflow.complete, or a duplicate
		}
		if len(s.Parameters) == 0 {
			s.Parameters = json.RawMessage(`{"type":"object","additionalProperties":false}`)
		}
		compiled, err := compile(s)
		if err != nil {
			return nil, workflow.Errorf(workflow.KindInvalid, "action %s: parameters: %v", s.Name, err)
		}
		c.schemas[s.Name] = compiled
		c.specs = append(c.specs, s)
	}
	slices.SortFunc(c.specs, func(a, b workflow.ActionSpec) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(c.conns, func(a, b workflow.Connection) int { return strings.Compare(a.Label, b.Label) })
	return c, nil
}

// noLoader refuses every $ref outside the schema itself.
type noLoader struct{}

// Load refuses url.
func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external schema references are not allowed (%s)", url)
}

func compile(s workflow.ActionSpec) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(s.Parameters))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	url := "mem:///qualify/" + s.Name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// Actions returns every action, sorted by name.
func (c *Catalogue) Actions() []workflow.ActionSpec { return c.specs }

// Action returns one action by name.
func (c *Catalogue) Action(name string) (workflow.ActionSpec, bool) {
	i := slices.IndexFunc(c.specs, func(s workflow.ActionSpec) bool { return s.Name == name })
	if i < 0 {
		return workflow.ActionSpec{}, false
	}
	return c.specs[i], true
}

// ValidateParameters validates params against the action's schema: one
// "path: message" line per problem.
func (c *Catalogue) ValidateParameters(name string, params map[string]any) []string {
	s, ok := c.schemas[name]
	if !ok {
		return []string{fmt.Sprintf("/: unknown action %q", name)}
	}
	err := s.Validate(map[string]any(params))
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []string{"/: " + err.Error()}
	}
	return leafProblems(ve, message.NewPrinter(language.English), nil)
}

// leafProblems lists the deepest causes of e as "path: message" lines.
func leafProblems(e *jsonschema.ValidationError, p *message.Printer, out []string) []string {
	if len(e.Causes) == 0 {
		return append(out, "/"+strings.Join(e.InstanceLocation, "/")+": "+e.ErrorKind.LocalizedString(p))
	}
	for _, c := range e.Causes {
		out = leafProblems(c, p, out)
	}
	return out
}

// Execute refuses: a qualification never runs an action.
func (c *Catalogue) Execute(context.Context, workflow.ActionCall) (workflow.ActionResult, error) {
	return workflow.ActionResult{}, workflow.Errorf(workflow.KindForbidden, "a qualification run executes no action")
}

// Connections returns the catalogue's connections (every user owns them).
func (c *Catalogue) Connections(string) []workflow.Connection { return c.conns }
