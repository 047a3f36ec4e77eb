package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/twostep/twostep/workflow"
)

// testFencedCommit checks Commit.Fence: a commit carrying the fence of the
// current lease applies, one carrying an older fence is KindConflict and
// writes nothing, and a commit without a fence is unchecked.
func testFencedCommit(t *testing.T, f Fixture) {
	ctx := context.Background()
	wf, _, _ := create(t, f.Store, newWorkflow("alice"))
	commit := func(fence int64) (*workflow.Workflow, error) {
		next := wf.Clone()
		next.Step++
		m := workflow.Message{ID: workflow.NewID(workflow.PrefixMessage), Round: 1, Step: next.Step,
			Role: workflow.RoleAction, Action: "ai.process", Status: workflow.MessageSuccess, Text: "fenced"}
		got, _, err := f.Store.Commit(ctx, workflow.Commit{Workflow: next, ExpectedVersion: wf.Version,
			Messages: []workflow.Message{m}, Fence: fence})
		return got, err
	}
	_, err := commit(1)
	wantKind(t, "Commit with a fence no lease was issued", err, workflow.KindConflict)

	a, err := f.Store.ClaimRound(ctx, wf.ID, "a", time.Minute)
	must(t, "ClaimRound(a)", err)
	if wf, err = commit(a); err != nil {
		t.Fatalf("Commit with the holder's fence %d: %v", a, err)
	}
	must(t, "ReleaseRound(a)", f.Store.ReleaseRound(ctx, wf.ID, "a"))
	b, err := f.Store.ClaimRound(ctx, wf.ID, "b", time.Minute)
	must(t, "ClaimRound(b)", err)
	if b <= a {
		t.Fatalf("b's fence %d is not greater than a's %d", b, a)
	}

	_, err = commit(a)
	wantKind(t, "Commit with a's fence after b took over", err, workflow.KindConflict)
	msgs, err := f.Store.Messages(ctx, wf.ID, 0, 0)
	must(t, "Messages", err)
	if got, _ := f.Store.GetWorkflow(ctx, wf.ID); got == nil || got.Version != wf.Version || len(msgs) != 2 {
		t.Fatalf("a fenced commit wrote: %d messages (want 2), stored %+v, want version %d", len(msgs), got, wf.Version)
	}
	if wf, err = commit(b); err != nil {
		t.Fatalf("Commit with b's fence %d: %v", b, err)
	}
	if _, err = commit(0); err != nil {
		t.Fatalf("Commit without a fence: %v", err)
	}
}

// testRunningLimit checks Commit.RunningLimit on creation, on a new round,
// on commits of a workflow already running and with a paused workflow.
func testRunningLimit(t *testing.T, f Fixture) {
	ctx := context.Background()
	const limit = 2
	start := func(wf *workflow.Workflow, expected int64) (*workflow.Workflow, error) {
		got, _, err := f.Store.Commit(ctx, workflow.Commit{Workflow: wf, ExpectedVersion: expected, RunningLimit: limit})
		return got, err
	}
	first, err := start(newWorkflow("alice"), 0)
	must(t, "first create", err)
	paused := newWorkflow("alice")
	paused.Status = workflow.StatusAwaitingApproval
	_, err = start(paused, 0)
	must(t, "create awaiting approval", err)
	_, err = start(newWorkflow("alice"), 0)
	must(t, "second create", err)

	third := newWorkflow("alice")
	_, err = start(third, 0)
	wantKind(t, "third create over the limit", err, workflow.KindTooMany)
	_, err = f.Store.GetWorkflow(ctx, third.ID)
	wantKind(t, "GetWorkflow of the refused create", err, workflow.KindNotFound)
	if _, err := start(newWorkflow("bob"), 0); err != nil {
		t.Errorf("another user's create counted alice's rounds: %v", err)
	}

	next := first.Clone()
	next.Step++
	if first, err = start(next, first.Version); err != nil {
		t.Fatalf("a step of a running workflow at the limit: %v", err)
	}
	done := first.Clone()
	done.Status = workflow.StatusCompleted
	done, err = start(done, first.Version)
	must(t, "complete the first workflow", err)
	if _, err := start(third, 0); err != nil {
		t.Fatalf("create once a round ended: %v", err)
	}
	again := done.Clone()
	again.Status, again.Round = workflow.StatusRunning, 2
	_, err = start(again, done.Version)
	wantKind(t, "new round over the limit", err, workflow.KindTooMany)
	if got, err := f.Store.GetWorkflow(ctx, done.ID); err != nil || got.Version != done.Version || got.Status != workflow.StatusCompleted {
		t.Errorf("the refused new round wrote: %+v, %v", got, err)
	}
	ids, err := f.RunningFor(ctx, "alice")
	must(t, "RunningFor", err)
	if len(ids) != limit {
		t.Fatalf("alice has %d running workflows, want %d", len(ids), limit)
	}
	must(t, "DeleteWorkflow(running)", f.Store.DeleteWorkflow(ctx, ids[0]))
	if _, err := start(newWorkflow("alice"), 0); err != nil {
		t.Errorf("create after a running workflow was deleted: %v", err)
	}
}

// testRunningLimitConcurrent races many creates of one user: exactly the
// limit is accepted, every other one is KindTooMany.
func testRunningLimitConcurrent(t *testing.T, f Fixture) {
	ctx := context.Background()
	const limit, n = 4, 40
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		accepted int
		others   []error
	)
	for range n {
		wg.Go(func() {
			_, _, err := f.Store.Commit(ctx, workflow.Commit{Workflow: newWorkflow("carol"), RunningLimit: limit})
			mu.Lock()
			defer mu.Unlock()
			switch workflow.KindOf(err) {
			case "":
				accepted++
			case workflow.KindTooMany:
			default:
				others = append(others, err)
			}
		})
	}
	wg.Wait()
	if accepted != limit || len(others) > 0 {
		t.Fatalf("%d of %d concurrent creates accepted (want %d); other errors: %v", accepted, n, limit, others)
	}
}
