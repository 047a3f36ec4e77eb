package approval

import (
	"context"
	"testing"

	"github.com/twostep/twostep/actions"
	"github.com/twostep/twostep/workflow"
)

// okModel answers every request with "ok", so ai.process is registered.
type okModel struct{}

// Generate answers "ok".
func (okModel) Generate(context.Context, workflow.ModelRequest) (workflow.ModelResponse, error) {
	return workflow.ModelResponse{Text: "ok", Model: "fake"}, nil
}

// newRegistry builds the built-in registry the policy reads; withModel
// registers ai.process too.
func newRegistry(t *testing.T, withModel bool) *actions.Registry {
	t.Helper()
	var model workflow.Model
	if withModel {
		model = okModel{}
	}
	r, err := actions.New(actions.Config{}, model)
	if err != nil {
		t.Fatalf("actions.New: %v", err)
	}
	return r
}

// echoExternal is an external action (an MCP tool) of the given effect.
func echoExternal(name string, effect workflow.Effect) actions.ExternalAction {
	return actions.ExternalAction{
		Spec:   workflow.ActionSpec{Name: name, Description: "echo", Effect: effect, Server: "srv"},
		Schema: map[string]any{"type": "object"},
		Run: func(context.Context, workflow.ActionCall) (workflow.ActionResult, error) {
			return workflow.ActionResult{Text: "echo"}, nil
		},
	}
}
