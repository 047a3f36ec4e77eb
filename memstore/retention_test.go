package memstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/workflow"
)

// TestRetentionEvictsIdleWorkflows: with a retention, a workflow not
// committed to for that long reads as missing everywhere (get, list,
// messages, traces, running) at once, and the next commit frees its
// memory; one committed to since is kept.
func TestRetentionEvictsIdleWorkflows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	s := memstore.New(memstore.WithClock(clock.Now), memstore.WithRetention(time.Hour))
	commit := func(id string, version int64) {
		t.Helper()
		wf := &workflow.Workflow{ID: id, UserID: "alice", Mode: workflow.ModeReact, Status: workflow.StatusRunning,
			Round: 1, Step: 1, MaxSteps: 3, CreatedAt: clock.Now(), UpdatedAt: clock.Now()}
		var msgs []workflow.Message
		if version == 0 {
			msgs = []workflow.Message{{ID: workflow.NewID(workflow.PrefixMessage), Round: 1, Role: workflow.RoleUser, Text: "hi"}}
		}
		if _, _, err := s.Commit(ctx, workflow.Commit{Workflow: wf, ExpectedVersion: version, Messages: msgs}); err != nil {
			t.Fatal(err)
		}
		if err := s.AppendTrace(ctx, workflow.Trace{ID: workflow.NewID(workflow.PrefixTrace), WorkflowID: id, Round: 1, Step: 1,
			Stage: workflow.StageOne, Attempt: 1}); err != nil {
			t.Fatal(err)
		}
	}
	old, kept := workflow.NewID(workflow.PrefixWorkflow), workflow.NewID(workflow.PrefixWorkflow)
	commit(old, 0)
	commit(kept, 0)
	clock.Advance(40 * time.Minute)
	commit(kept, 1)
	clock.Advance(21 * time.Minute) // old: 61 min idle; kept: 21 min

	if _, err := s.GetWorkflow(ctx, old); workflow.KindOf(err) != workflow.KindNotFound {
		t.Errorf("GetWorkflow(expired) = %v, want not found", err)
	}
	if _, err := s.Messages(ctx, old, 0, 0); workflow.KindOf(err) != workflow.KindNotFound {
		t.Errorf("Messages(expired) = %v, want not found", err)
	}
	if _, err := s.GetWorkflow(ctx, kept); err != nil {
		t.Errorf("GetWorkflow(kept) = %v", err)
	}
	all, _, err := s.ListAll(ctx, workflow.Page{})
	if err != nil || len(all) != 1 || all[0].ID != kept {
		t.Errorf("ListAll = %d workflows (%v), want only the kept one", len(all), err)
	}
	running, err := s.Running(ctx)
	if err != nil || len(running) != 1 || running[0] != kept {
		t.Errorf("Running = %v (%v), want only the kept one", running, err)
	}
	if n := memstore.EntriesOf(s, old); n == 0 {
		t.Fatalf("the expired workflow was freed before any commit swept")
	}
	commit(workflow.NewID(workflow.PrefixWorkflow), 0) // sweeps
	if n := memstore.EntriesOf(s, old); n != 0 {
		t.Errorf("%d entries of the expired workflow left after a sweep, want 0", n)
	}
	if n := memstore.EntriesOf(s, kept); n == 0 {
		t.Error("the kept workflow was swept")
	}
}

// TestDueApprovalsRemovesEvictedWorkflows: a workflow outlived by the
// retention while awaiting approval is skipped by DueApprovals and, with
// its approval index entry, removed there, not left for a sweep that may
// never come (no commit in between).
func TestDueApprovalsRemovesEvictedWorkflows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	s := memstore.New(memstore.WithClock(clock.Now), memstore.WithRetention(time.Hour))
	id := workflow.NewID(workflow.PrefixWorkflow)
	wf := &workflow.Workflow{ID: id, UserID: "alice", Mode: workflow.ModeReact, Status: workflow.StatusAwaitingApproval,
		Round: 1, Step: 1, MaxSteps: 3, CreatedAt: clock.Now(), UpdatedAt: clock.Now(),
		PendingApproval: &workflow.PendingApproval{ID: workflow.NewID(workflow.PrefixApproval), Action: "test.echo",
			Round: 1, Step: 1, RequestedAt: clock.Now(), ExpiresAt: clock.Now().Add(time.Minute)}}
	if _, _, err := s.Commit(ctx, workflow.Commit{Workflow: wf}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * time.Hour)
	ids, next, err := s.DueApprovals(ctx, clock.Now(), workflow.DueCursor{}, 10)
	if err != nil || len(ids) != 0 || !next.IsZero() {
		t.Fatalf("DueApprovals = %v, %+v, %v; want none due and the end of the index", ids, next, err)
	}
	if n := memstore.EntriesOf(s, id); n != 0 {
		t.Errorf("%d entries of the evicted workflow left after DueApprovals read it, want 0", n)
	}
}
