package react_test

import (
	"slices"
	"testing"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/modes/react"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/templates"
	"github.com/twostep/twostep/workflow"
)

func newMode(t testing.TB) *react.Mode {
	t.Helper()
	return react.New(newBuilder(t))
}

// newBuilder returns a prompt builder over the embedded templates, with
// the history budget the scripted rounds of these tests were written for
// (12,000 characters: they compact only where they say so).
func newBuilder(t testing.TB) *prompts.Builder {
	t.Helper()
	return newBuilderWith(t, prompts.Options{HistoryBudget: 12000})
}

// newBuilderWith returns a prompt builder over the embedded templates
// with opts.
func newBuilderWith(t testing.TB, opts prompts.Options) *prompts.Builder {
	t.Helper()
	set, err := templates.Load("")
	if err != nil {
		t.Fatalf("templates.Load: %v", err)
	}
	return prompts.NewBuilder(set, opts)
}

// startEngine returns a started engine running the React mode over store.
func startEngine(t testing.TB, cfg engine.Config, store workflow.Store, model workflow.Model, reg workflow.Registry) *enginetest.Engine {
	t.Helper()
	return enginetest.StartEngine(t, cfg, store, model, reg, map[workflow.ModeName]workflow.Mode{workflow.ModeReact: newMode(t)})
}

func replies(steps ...[]string) []string { return slices.Concat(steps...) }

func create(t testing.TB, e *enginetest.Engine, prompt string, maxSteps int) *workflow.Workflow {
	t.Helper()
	return enginetest.Create(t, e, workflow.ModeReact, prompt, maxSteps)
}

// The harness lives in enginetest; these names keep the tests short.
func testConfig(instance string) engine.Config { return enginetest.Config(instance) }

func wait(t testing.TB, e *enginetest.Engine, id string) *workflow.Workflow {
	t.Helper()
	return enginetest.Wait(t, e, id)
}

func messages(t testing.TB, s workflow.Store, id string) []workflow.Message {
	t.Helper()
	return enginetest.Messages(t, s, id)
}

// shape is a message reduced to what the tests compare (a local type, so
// the tests may write it unkeyed).
type shape enginetest.Shape

func shapes(msgs []workflow.Message) []shape {
	out := make([]shape, len(msgs))
	for i, s := range enginetest.Shapes(msgs) {
		out[i] = shape(s)
	}
	return out
}

func stages(calls []scripted.Call) []workflow.Stage { return enginetest.Stages(calls) }

func newStore() *memstore.Store { return memstore.New() }
