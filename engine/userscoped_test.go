package engine_test

import (
	"context"
	"sync"
	"testing"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/workflow"
)

// scopedRegistry adds the action "mcp.own.tool" for user "alice" only.
type scopedRegistry struct {
	*enginetest.Registry
}

func (r scopedRegistry) ForUser(userID string) workflow.Registry {
	if userID != "alice" {
		return r.Registry
	}
	own := enginetest.NewRegistry()
	own.Specs = append(own.Specs, workflow.ActionSpec{Name: "mcp.own.tool", Effect: workflow.EffectRead, Server: "own"})
	return own
}

// TestRunRegistryIsTheUsersView: a mode sees the registry as the
// workflow's user sees it when the registry is UserScoped.
func TestRunRegistryIsTheUsersView(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	seen := map[string]bool{} // user → saw mcp.own.tool
	step := func(ctx context.Context, run workflow.Run) error {
		_, ok := run.Registry().Action("mcp.own.tool")
		mu.Lock()
		seen[run.Workflow().UserID] = ok
		mu.Unlock()
		return run.CommitStep(ctx, workflow.StepResult{
			Messages: []workflow.Message{{ID: workflow.NewID(workflow.PrefixMessage), Role: workflow.RoleAssistant, Text: "done"}},
			End:      &workflow.RoundEnd{Status: workflow.StatusCompleted, Reason: workflow.StopCompleted},
		})
	}
	cfg := enginetest.Config("scoped")
	e := enginetest.StartEngine(t, cfg, memstore.New(), scripted.New(), scopedRegistry{enginetest.NewRegistry()},
		map[workflow.ModeName]workflow.Mode{workflow.ModeReact: stubMode{step}})
	for _, user := range []string{"alice", "bob"} {
		wf, err := e.Create(context.Background(), engine.NewWorkflow{UserID: user, Prompt: "hi", Mode: workflow.ModeReact, MaxSteps: 2})
		if err != nil {
			t.Fatal(err)
		}
		enginetest.Wait(t, e, wf.ID)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 || !seen["alice"] || seen["bob"] {
		t.Errorf("saw mcp.own.tool: %v, want alice only", seen)
	}
}
