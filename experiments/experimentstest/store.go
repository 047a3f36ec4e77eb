// Package experimentstest is the conformance suite of experiment.Store:
// every store that keeps experiments runs it.
package experimentstest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/twostep/twostep/workflow"
	"github.com/twostep/twostep/workflow/experiment"
)

// Run checks store against the guarantees of experiment.Store. advance
// lets lease time pass (a sleep, or a fake Redis' fast-forward).
func Run(t *testing.T, store experiment.Store, advance func(time.Duration)) {
	ctx := context.Background()
	id := workflow.NewID(experiment.PrefixExperiment)
	if _, err := store.GetExperiment(ctx, id); workflow.KindOf(err) != workflow.KindNotFound {
		t.Fatalf("GetExperiment of an unknown id: %v, want KindNotFound", err)
	}
	if _, err := store.GetExperiment(ctx, "ex_}{*"); workflow.KindOf(err) != workflow.KindNotFound {
		t.Fatalf("GetExperiment of a malformed id: %v, want KindNotFound", err)
	}
	yes, usd := true, 0.25
	e := &experiment.Experiment{ID: id, Status: experiment.StatusRunning, Stage: workflow.StageTwo,
		Spec: experiment.Spec{Stage: workflow.StageTwo, Workflows: []string{"wf_1"}, Templates: map[string]string{"stage2": "--- user ---\nx\n"}},
		Calls: []experiment.Call{{TraceID: "tr_1", WorkflowID: "wf_1", Round: 1, Step: 2, Recorded: []byte(`{"a":1}`), Result: []byte(`{"a":2}`),
			Agreement: experiment.Agreement{Parameters: map[string]bool{"a": false}}, Tokens: 12, USD: &usd}},
		Totals:    experiment.Totals{Calls: 1, Tokens: 12, USD: &usd},
		CreatedAt: time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC), UpdatedAt: time.Date(2026, 11, 27, 10, 0, 1, 0, time.UTC)}
	e.Calls[0].Agreement.Action = &yes
	if err := store.PutExperiment(ctx, e); err != nil {
		t.Fatal(err)
	}
	got, err := store.GetExperiment(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(e, got); diff != "" {
		t.Errorf("stored experiment (-put +got):\n%s", diff)
	}
	running, err := store.RunningExperiments(ctx)
	if err != nil || !slices.Contains(running, id) {
		t.Errorf("RunningExperiments = %v, %v; want %s in it", running, err, id)
	}

	if ok, err := store.ClaimExperiment(ctx, id, "a", 200*time.Millisecond); err != nil || !ok {
		t.Fatalf("a's first claim: %v, %v", ok, err)
	}
	if ok, err := store.ClaimExperiment(ctx, id, "b", 200*time.Millisecond); err != nil || ok {
		t.Fatalf("b took a's running lease: %v, %v", ok, err)
	}
	if ok, err := store.ClaimExperiment(ctx, id, "a", 200*time.Millisecond); err != nil || !ok {
		t.Fatalf("a's renewal: %v, %v", ok, err)
	}
	advance(300 * time.Millisecond)
	if ok, err := store.ClaimExperiment(ctx, id, "b", 200*time.Millisecond); err != nil || !ok {
		t.Fatalf("b could not take a's expired lease: %v, %v", ok, err)
	}

	if stop, err := store.Stopping(ctx, id); err != nil || stop {
		t.Fatalf("Stopping before any request: %v, %v", stop, err)
	}
	if err := store.RequestStop(ctx, id); err != nil {
		t.Fatal(err)
	}
	e.Status = experiment.StatusStopped
	if err := store.PutExperiment(ctx, e); err != nil {
		t.Fatal(err)
	}
	if stop, err := store.Stopping(ctx, id); err != nil || !stop {
		t.Errorf("Stopping after a request and a Put: %v, %v", stop, err)
	}
	running, err = store.RunningExperiments(ctx)
	if err != nil || slices.Contains(running, id) {
		t.Errorf("RunningExperiments = %v, %v after the experiment stopped", running, err)
	}
}
