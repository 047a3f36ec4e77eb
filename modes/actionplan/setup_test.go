package actionplan_test

import (
	"encoding/json"
	"testing"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/modes/actionplan"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/templates"
	"github.com/twostep/twostep/workflow"
)

func newBuilder(t testing.TB) *prompts.Builder {
	t.Helper()
	set, err := templates.Load("")
	if err != nil {
		t.Fatalf("templates.Load: %v", err)
	}
	return prompts.NewBuilder(set, prompts.Options{})
}

func newMode(t testing.TB) *actionplan.Mode {
	t.Helper()
	return actionplan.New(newBuilder(t), actionplan.Options{})
}

// startEngine returns a started engine running the action-plan mode over
// store.
func startEngine(t testing.TB, cfg engine.Config, store workflow.Store, model workflow.Model, reg workflow.Registry) *enginetest.Engine {
	t.Helper()
	return enginetest.StartEngine(t, cfg, store, model, reg, map[workflow.ModeName]workflow.Mode{workflow.ModeActionPlan: newMode(t)})
}

// startEngineWith is startEngine with the mode configured by opts.
func startEngineWith(t testing.TB, opts actionplan.Options, cfg engine.Config, store workflow.Store, model workflow.Model, reg workflow.Registry) *enginetest.Engine {
	t.Helper()
	mode := actionplan.New(newBuilder(t), opts)
	return enginetest.StartEngine(t, cfg, store, model, reg, map[workflow.ModeName]workflow.Mode{workflow.ModeActionPlan: mode})
}

// noReplan turns re-planning off, so a failed step leaves the plan as it is.
var noReplan = actionplan.Options{MaxReplans: -1}

func create(t testing.TB, e *enginetest.Engine, prompt string, maxSteps int) *workflow.Workflow {
	t.Helper()
	return enginetest.Create(t, e, workflow.ModeActionPlan, prompt, maxSteps)
}

func traces(t testing.TB, s workflow.Store, id string) []workflow.Trace {
	t.Helper()
	return enginetest.Traces(t, s, id)
}

// modelTraces returns the traces of model calls (plan and repair), in order.
func modelTraces(t testing.TB, s workflow.Store, id string) []workflow.Trace {
	t.Helper()
	var out []workflow.Trace
	for _, tr := range traces(t, s, id) {
		if tr.Stage != workflow.StageAction {
			out = append(out, tr)
		}
	}
	return out
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

// step is one plan step as the model writes it.
type step struct {
	Action      string         `json:"action"`
	Parameters  map[string]any `json:"parameters,omitempty"`
	ResultLabel string         `json:"resultLabel,omitempty"`
}

func echo(text, label string, docs ...string) step {
	p := map[string]any{"text": text}
	if len(docs) > 0 {
		p["documentList"] = docs
	}
	return step{Action: enginetest.Echo, Parameters: p, ResultLabel: label}
}

func complete(message string) step {
	return step{Action: workflow.CompleteAction, Parameters: map[string]any{"message": message}}
}

// planJSON renders steps as the model's JSON array.
func planJSON(steps ...step) string {
	b, err := json.MarshalIndent(steps, "", "  ")
	if err != nil {
		panic(err)
	}
	return string(b)
}

func newStore() *memstore.Store { return memstore.New() }

// storedPlan is the action-plan mode's part of a checkpoint, read as it
// is stored (the member names a stored checkpoint has kept since they
// were fields of workflow.Checkpoint).
type storedPlan struct {
	Plan      []workflow.PlanStep `json:"plan"`
	PlanIndex int                 `json:"planIndex"`
	Replans   int                 `json:"replans"`
}

// planOf reads the mode's part of cp (zero for nil).
func planOf(t *testing.T, cp *workflow.Checkpoint) storedPlan {
	t.Helper()
	var s storedPlan
	if cp == nil {
		return s
	}
	if err := cp.Mode.Decode(&s); err != nil {
		t.Fatalf("checkpoint's mode state %s: %v", cp.Mode, err)
	}
	return s
}
