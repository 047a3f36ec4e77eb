package experiments_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/experiments"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/modes/react"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/templates"
	"github.com/twostep/twostep/workflow"
)

// ticket is the action of the recorded workflow: two string parameters.
const ticket = "test.ticket"

// world is a workflow of ten recorded steps — nine tickets, then the
// answer — run by a scripted model over a registry that counts executions.
type world struct {
	store    *memstore.Store
	engine   *enginetest.Engine
	registry *enginetest.Registry
	builder  *prompts.Builder
	executed *atomic.Int64
	wf       *workflow.Workflow
}

// selectTicket is Stage 1's reply of ticket step i: the title in the
// objective, the priority in the parameters context.
func selectTicket(i int, priority string) string {
	return mustJSON(map[string]any{
		"action": ticket, "actionObjective": fmt.Sprintf("file ticket title=t%d", i), "learnings": []string{},
		"requiredInputDocuments": []string{}, "requiredConnection": nil,
		"parametersContext": "priority=" + priority,
		"parametersSchema": map[string]any{"fields": []map[string]any{
			{"name": "title", "type": "string", "required": true, "description": "the title"},
			{"name": "priority", "type": "string", "required": true, "description": "the priority"},
		}},
	})
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func newWorld(t *testing.T) *world {
	t.Helper()
	set, err := templates.Load("")
	if err != nil {
		t.Fatal(err)
	}
	w := &world{store: memstore.New(), registry: enginetest.NewRegistry(), builder: prompts.NewBuilder(set, prompts.Options{HistoryBudget: 12000}),
		executed: &atomic.Int64{}}
	params, _ := json.Marshal(map[string]any{"type": "object", "required": []string{"title", "priority"}, "additionalProperties": false,
		"properties": map[string]any{"title": map[string]any{"type": "string"}, "priority": map[string]any{"type": "string"}}})
	w.registry.Specs = append(w.registry.Specs, workflow.ActionSpec{Name: ticket, Description: "Files a ticket.", Parameters: params,
		Effect: workflow.EffectRead, Documents: workflow.DocumentsNone})
	w.registry.ExecuteFunc = func(_ context.Context, call workflow.ActionCall) (workflow.ActionResult, error) {
		w.executed.Add(1)
		return workflow.ActionResult{Text: "done " + call.Action}, nil
	}
	var replies []string
	for i := 1; i <= 9; i++ {
		replies = append(replies, selectTicket(i, "high"), enginetest.Params(map[string]any{"title": fmt.Sprintf("t%d", i), "priority": "high"}))
	}
	replies = append(replies, enginetest.Completes("filed nine tickets")...)
	w.engine = enginetest.StartEngine(t, enginetest.Config("a"), w.store, scripted.New(replies...), w.registry,
		map[workflow.ModeName]workflow.Mode{workflow.ModeReact: react.New(w.builder)})
	wf := enginetest.Create(t, w.engine, workflow.ModeReact, "file nine tickets", 12)
	w.wf = enginetest.Wait(t, w.engine, wf.ID)
	if w.wf.Status != workflow.StatusCompleted || w.wf.Step != 10 {
		t.Fatalf("recorded workflow %s at step %d: %s", w.wf.Status, w.wf.Step, w.wf.Error)
	}
	return w
}

// filler is a model that fills Stage 2 from what its prompt shows: the
// title from the objective, the priority from the parameters context
// ("low" when the prompt does not show one), the message as "filed nine
// tickets".
func filler() *scripted.Model {
	title, priority := regexp.MustCompile(`title=(\w+)`), regexp.MustCompile(`priority=(\w+)`)
	return &scripted.Model{Model: "filler", Reply: func(_ int, req workflow.ModelRequest) (string, error) {
		text := scripted.Call{ModelRequest: req}.Text()
		if strings.Contains(text, workflow.CompleteAction) {
			return enginetest.Params(map[string]any{"message": "filed nine tickets"}), nil
		}
		p := "low"
		if m := priority.FindStringSubmatch(text); m != nil {
			p = m[1]
		}
		t := ""
		if m := title.FindStringSubmatch(text); m != nil {
			t = m[1]
		}
		return enginetest.Params(map[string]any{"title": t, "priority": p}), nil
	}}
}

// runner returns a Runner over w with model as the gateway's model.
func (w *world) runner(t *testing.T, model workflow.Model, owner string) *experiments.Runner {
	t.Helper()
	r, err := experiments.New(experiments.Options{
		Store: w.store, Reads: w.engine.Admin(), Registry: w.registry, Prompts: w.builder, Model: model,
		Owner: owner, LeaseTTL: 300 * time.Millisecond, Concurrency: 3,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

// finish waits (at most 10 s) until the experiment is no longer running.
func finish(t *testing.T, r *experiments.Runner, id string) *experiments.Experiment {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		e, err := r.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if e.Status != experiments.StatusRunning {
			return e
		}
		if time.Now().After(deadline) {
			t.Fatalf("experiment %s still running after 10 s: %d calls", id, len(e.Calls))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// snapshot is everything stored of the workflow, as JSON.
func (w *world) snapshot(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	wf, err := w.store.GetWorkflow(ctx, w.wf.ID)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := w.store.Messages(ctx, w.wf.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	traces, err := w.store.Traces(ctx, w.wf.ID)
	if err != nil {
		t.Fatal(err)
	}
	return mustJSON([]any{wf, msgs, traces})
}
