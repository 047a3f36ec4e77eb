package react_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/workflow"
)

// switchBudget is a workflow.Budgeter spent while spent is set.
type switchBudget struct{ spent atomic.Bool }

func (b *switchBudget) Check(context.Context, string) error {
	if b.spent.Load() {
		return &workflow.BudgetError{What: "the daily budget of 2500 tokens", ResetsAt: time.Now().Add(time.Hour)}
	}
	return nil
}

func (b *switchBudget) Reserve(ctx context.Context, userID string, _ int64) (workflow.BudgetReservation, error) {
	return workflow.BudgetReservation{UserID: userID}, b.Check(ctx, userID)
}

func (b *switchBudget) Settle(context.Context, workflow.BudgetReservation, workflow.ModelUsage) {}

// TestForkChecksTheBudgetAndTheRunningLimit (issue 45 item 4): a fork is
// new work. With the user's budget spent it is refused with a budget
// error (429) and nothing is stored; with the user at the running limit
// its commit is refused (429); otherwise it is created running.
func TestForkChecksTheBudgetAndTheRunningLimit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := newStore()
	base := time.Now().UTC()
	put := func(status workflow.Status) *workflow.Workflow {
		t.Helper()
		wf := &workflow.Workflow{ID: workflow.NewID(workflow.PrefixWorkflow), UserID: "alice", Mode: workflow.ModeReact,
			Status: status, Round: 1, Step: 1, MaxSteps: 5, CreatedAt: base, UpdatedAt: base}
		stored, _, err := store.Commit(ctx, workflow.Commit{Workflow: wf})
		if err != nil {
			t.Fatal(err)
		}
		return stored
	}
	original := put(workflow.StatusCompleted)
	budget := &switchBudget{}
	cfg := testConfig("a")
	cfg.Budget, cfg.MaxRunningPerUser = budget, 1
	// Not started: the fork's round is not run, so the limit stays reached.
	e, err := enginetest.NewEngine(cfg, store, scripted.New(), enginetest.NewRegistry(),
		map[workflow.ModeName]workflow.Mode{workflow.ModeReact: newMode(t)})
	if err != nil {
		t.Fatal(err)
	}
	count := func() int {
		t.Helper()
		list, _, err := store.ListWorkflows(ctx, "alice", workflow.Page{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		return len(list)
	}

	budget.spent.Store(true)
	_, err = e.Fork(ctx, "alice", original.ID, engine.ForkRequest{Round: 1, Step: 1})
	var be *workflow.BudgetError
	if !errors.As(err, &be) || workflow.KindOf(err) != workflow.KindTooMany {
		t.Errorf("Fork with the budget spent = %v, want a budget error (KindTooMany)", err)
	}
	if n := count(); n != 1 {
		t.Errorf("%d workflows after a refused fork, want 1", n)
	}

	budget.spent.Store(false)
	put(workflow.StatusRunning)
	if _, err := e.Fork(ctx, "alice", original.ID, engine.ForkRequest{Round: 1, Step: 1}); workflow.KindOf(err) != workflow.KindTooMany {
		t.Errorf("Fork at the running limit = %v, want KindTooMany", err)
	}
	if n := count(); n != 2 {
		t.Errorf("%d workflows after a fork refused at the limit, want 2", n)
	}
}
