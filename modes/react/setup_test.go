package react_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/modes/react"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/templates"
	"github.com/twostep/twostep/workflow"
	"github.com/twostep/twostep/workflow/enginetest"
)

// testConfig is a configuration with short intervals, so lease and poll
// behaviour shows within a test.
func testConfig(instance string) workflow.EngineConfig {
	return workflow.EngineConfig{
		InstanceID: instance, LeaseTTL: 300 * time.Millisecond,
		RecoverInterval: 20 * time.Millisecond, PollInterval: 10 * time.Millisecond,
	}
}

func newMode(t testing.TB) *react.Mode {
	t.Helper()
	return react.New(newBuilder(t))
}

// newBuilder returns a prompt builder over the embedded templates.
func newBuilder(t testing.TB) *prompts.Builder {
	t.Helper()
	set, err := templates.Load("")
	if err != nil {
		t.Fatalf("templates.Load: %v", err)
	}
	return prompts.NewBuilder(set, prompts.Options{})
}

// startEngine returns a started engine over store; it is shut down when the
// test ends.
func startEngine(t testing.TB, cfg workflow.EngineConfig, store workflow.Store, model workflow.Model, reg workflow.Registry) *workflow.Engine {
	t.Helper()
	e, err := workflow.NewEngine(cfg, store, model, reg, map[workflow.ModeName]workflow.Mode{workflow.ModeReact: newMode(t)})
	if err != nil {
		t.Fatalf("NewEngine: %v", err)
	}
	e.Start(context.Background())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := e.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return e
}

func replies(steps ...[]string) []string { return slices.Concat(steps...) }

func create(t testing.TB, e *workflow.Engine, prompt string, maxSteps int) *workflow.Workflow {
	t.Helper()
	wf, err := e.Create(context.Background(), workflow.NewWorkflow{UserID: "alice", Prompt: prompt, MaxSteps: maxSteps})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	return wf
}

func wait(t testing.TB, e *workflow.Engine, id string) *workflow.Workflow {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wf, err := e.Wait(ctx, id)
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	return wf
}

func messages(t testing.TB, s workflow.Store, id string) []workflow.Message {
	t.Helper()
	msgs, err := s.Messages(context.Background(), id, 0, 0)
	if err != nil {
		t.Fatalf("Messages: %v", err)
	}
	return msgs
}

// shape is a message reduced to what the tests compare.
type shape struct {
	Round, Step int
	Role        workflow.Role
	Action      string
	Status      workflow.MessageStatus
}

func shapes(msgs []workflow.Message) []shape {
	out := make([]shape, len(msgs))
	for i, m := range msgs {
		out[i] = shape{m.Round, m.Step, m.Role, m.Action, m.Status}
	}
	return out
}

func stages(calls []enginetest.Call) []workflow.Stage {
	out := make([]workflow.Stage, len(calls))
	for i, c := range calls {
		out[i] = c.Stage
	}
	return out
}

func newStore() *memstore.Store { return memstore.New() }
