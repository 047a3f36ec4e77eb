package qualify

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/twostep/twostep/actions"
	"github.com/twostep/twostep/workflow"
)

// Catalogue is a case's actions and connections: the workflow.Registry its
// replies are parsed and validated against. Each action's schema is
// compiled and checked as the gateway's registry does it
// (actions.CompileParameters); nothing is ever executed.
type Catalogue struct {
	specs   []workflow.ActionSpec
	schemas map[string]actions.ParameterSchema
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
	c := &Catalogue{schemas: map[string]actions.ParameterSchema{}, conns: slices.Clone(conns)}
	for _, s := range append(slices.Clone(specs), completeSpec) {
		if _, ok := c.schemas[s.Name]; ok {
			continue // the case's own workflow.complete, or a duplicate
		}
		compiled, err := actions.CompileParameters(s.Name, s.Parameters)
		if err != nil {
			return nil, err
		}
		s.Parameters = compiled.JSON()
		c.schemas[s.Name] = compiled
		c.specs = append(c.specs, s)
	}
	slices.SortFunc(c.specs, func(a, b workflow.ActionSpec) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(c.conns, func(a, b workflow.Connection) int { return strings.Compare(a.Label, b.Label) })
	return c, nil
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

// ValidateParameters validates params as the gateway's registry does
// (actions.ParameterSchema): one "path: message" line per problem.
func (c *Catalogue) ValidateParameters(name string, params map[string]any) []string {
	s, ok := c.schemas[name]
	if !ok {
		return []string{fmt.Sprintf("/: unknown action %q", name)}
	}
	return s.Problems(params)
}

// Execute refuses: a qualification never runs an action.
func (c *Catalogue) Execute(context.Context, workflow.ActionCall) (workflow.ActionResult, error) {
	return workflow.ActionResult{}, workflow.Errorf(workflow.KindForbidden, "a qualification run executes no action")
}

// Connections returns the catalogue's connections (every user owns them).
func (c *Catalogue) Connections(string) []workflow.Connection { return c.conns }
