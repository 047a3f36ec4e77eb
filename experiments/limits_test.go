package experiments_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twostep/twostep/budgets"
	"github.com/twostep/twostep/experiments"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/workflow"
)

// limitedRunner returns a Runner over w with model, at most two
// experiments running and budget (nil: none).
func (w *world) limitedRunner(t *testing.T, model workflow.Model, budget workflow.Budgeter) *experiments.Runner {
	t.Helper()
	r, err := experiments.New(experiments.Options{
		Store: w.store, Reads: w.engine.Admin(), Registry: w.registry, Prompts: w.builder, Model: model,
		Owner: "a", LeaseTTL: 300 * time.Millisecond, Concurrency: 3, MaxRunning: 2, Budget: budget,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

// TestRunningExperimentsAreBounded (issue 45 item 16): thirty experiments
// started at once used to run at once; past MaxRunning a start is refused
// (429) until one ends.
func TestRunningExperimentsAreBounded(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	blocked := &scripted.Model{Model: "filler", Reply: func(int, workflow.ModelRequest) (string, error) { return "", scripted.ErrBlock }}
	r := w.limitedRunner(t, blocked, nil)
	ctx := context.Background()
	var started []*experiments.Experiment
	for range 2 {
		e, err := r.Start(ctx, experiments.Spec{Stage: workflow.StageOne})
		if err != nil {
			t.Fatal(err)
		}
		started = append(started, e)
	}
	if _, err := r.Start(ctx, experiments.Spec{Stage: workflow.StageOne}); workflow.KindOf(err) != workflow.KindTooMany {
		t.Fatalf("a third experiment while two run: %v, want KindTooMany", err)
	}
	if _, err := r.Stop(ctx, started[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Start(ctx, experiments.Spec{Stage: workflow.StageOne}); err != nil {
		t.Errorf("a start after one stopped: %v", err)
	}
}

// TestExperimentCallsChargeTheAdmin (issue 45 item 16): an experiment's
// calls count in the budget of the admin who started it; once it is
// spent the experiment fails saying so, and a start is refused.
func TestExperimentCallsChargeTheAdmin(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	fill := filler()
	lim := &budgets.Limiter{Config: budgets.Config{Users: map[string]budgets.Limit{"root": {Tokens: 1, Period: budgets.Day}}},
		Store: memstore.New(), Wait: -1}
	r := w.limitedRunner(t, fill, lim)
	ctx := context.Background()
	e, err := r.Start(ctx, experiments.Spec{Stage: workflow.StageTwo, StartedBy: "root"})
	if err != nil {
		t.Fatal(err)
	}
	e = finish(t, r, e.ID)
	if e.Status != experiments.StatusFailed || !strings.Contains(e.Error, "daily budget of 1 tokens") {
		t.Errorf("experiment %s (%s), want failed for the admin's budget", e.Status, e.Error)
	}
	if n := len(fill.Calls()); n != 1 {
		t.Errorf("%d model calls with a budget of 1 token, want 1 (the first; the rest refused)", n)
	}
	used, _, _, _, err := lim.Usage(ctx, "root")
	if err != nil || used.Tokens == 0 || used.Reserved != 0 {
		t.Errorf("root's usage = %+v (%v), want the call's tokens, nothing left reserved", used, err)
	}
	var be *workflow.BudgetError
	if _, err := r.Start(ctx, experiments.Spec{Stage: workflow.StageTwo, StartedBy: "root"}); !errors.As(err, &be) {
		t.Errorf("a start with the admin's budget spent: %v, want a budget error", err)
	}
}
