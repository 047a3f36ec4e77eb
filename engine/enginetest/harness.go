package enginetest

import (
	"context"
	"testing"
	"time"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/workflow"
)

// Config is an engine configuration with short recovery and poll
// intervals, and a lease that does not run out while the process is merely
// starved of CPU: a round's run holds its lease as long as the test does.
// Under heavy load (go test -race on a busy machine) a short lease runs out
// between two renewals; the engine then rightly cancels the run and redoes
// its step from the last checkpoint, which repeats a model call — and a
// test counting its scripted model's calls fails. A test whose instance dies
// and another takes the round over by the lease's expiry uses
// TakeoverConfig.
func Config(instance string) engine.Config {
	c := TakeoverConfig(instance)
	c.LeaseTTL = time.Minute
	return c
}

// TakeoverConfig is Config with a short lease, so an instance that died
// (see DyingStore) leaves its round to another within a test.
func TakeoverConfig(instance string) engine.Config {
	return engine.Config{
		InstanceID: instance, LeaseTTL: 300 * time.Millisecond,
		RecoverInterval: 20 * time.Millisecond, ReclaimInterval: 20 * time.Millisecond, PollInterval: 10 * time.Millisecond,
	}
}

// StartEngine returns a started engine over store running modes,
// publishing to a new changefeed.Feed unless cfg names Changes; it is
// shut down (and must shut down cleanly within 5 s) when the test ends.
func StartEngine(t testing.TB, cfg engine.Config, store workflow.Store, model workflow.Model,
	reg workflow.Registry, modes map[workflow.ModeName]workflow.Mode) *Engine {
	t.Helper()
	e, err := NewEngine(cfg, store, model, reg, modes)
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

// Create creates a workflow of user "alice" with prompt in mode.
func Create(t testing.TB, e *Engine, mode workflow.ModeName, prompt string, maxSteps int) *workflow.Workflow {
	t.Helper()
	wf, err := e.Create(context.Background(), engine.NewWorkflow{UserID: "alice", Prompt: prompt, Mode: mode, MaxSteps: maxSteps})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	return wf
}

// Wait waits (at most 10 s) until the workflow's round is no longer running.
func Wait(t testing.TB, e *Engine, id string) *workflow.Workflow {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wf, err := e.Wait(ctx, id)
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	return wf
}

// Messages returns every message of the workflow.
func Messages(t testing.TB, s workflow.Store, id string) []workflow.Message {
	t.Helper()
	msgs, err := s.Messages(context.Background(), id, 0, 0)
	if err != nil {
		t.Fatalf("Messages: %v", err)
	}
	return msgs
}

// Traces returns every trace of the workflow.
func Traces(t testing.TB, s workflow.Store, id string) []workflow.Trace {
	t.Helper()
	out, err := s.Traces(context.Background(), id)
	if err != nil {
		t.Fatalf("Traces: %v", err)
	}
	return out
}

// Shape is a message reduced to what round tests compare.
type Shape struct {
	Round, Step int
	Role        workflow.Role
	Action      string
	Status      workflow.MessageStatus
}

// Shapes reduces msgs to their shapes.
func Shapes(msgs []workflow.Message) []Shape {
	out := make([]Shape, len(msgs))
	for i, m := range msgs {
		out[i] = Shape{m.Round, m.Step, m.Role, m.Action, m.Status}
	}
	return out
}

// Stages returns the stage of each of a scripted model's calls, in order.
func Stages(calls []scripted.Call) []workflow.Stage {
	out := make([]workflow.Stage, len(calls))
	for i, c := range calls {
		out[i] = c.Stage
	}
	return out
}
