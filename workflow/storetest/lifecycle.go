package storetest

import (
	"context"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/twostep/twostep/workflow"
)

// testDelete removes a workflow with everything it owns and leaves its
// neighbour intact.
func testDelete(t *testing.T, f Fixture) {
	ctx := context.Background()
	a, _, aDoc := create(t, f.Store, newWorkflow("alice"))
	a, _ = step(t, f.Store, a, "work")
	b, _, bDoc := create(t, f.Store, newWorkflow("alice"))
	aTrace, bTrace := newTrace(a.ID, 1), newTrace(b.ID, 1)
	must(t, "AppendTrace(A)", f.Store.AppendTrace(ctx, aTrace))
	must(t, "AppendTrace(B)", f.Store.AppendTrace(ctx, bTrace))
	fence, err := f.Store.ClaimRound(ctx, a.ID, "instance-1", time.Minute)
	if err != nil || fence != 1 {
		t.Fatalf("ClaimRound(A) = %v, %v; want fence 1", fence, err)
	}

	must(t, "DeleteWorkflow(A)", f.Store.DeleteWorkflow(ctx, a.ID))

	_, err = f.Store.GetWorkflow(ctx, a.ID)
	wantKind(t, "GetWorkflow after delete", err, workflow.KindNotFound)
	_, err = f.Store.Messages(ctx, a.ID, 0, 0)
	wantKind(t, "Messages after delete", err, workflow.KindNotFound)
	_, err = f.Store.DocumentContent(ctx, a.ID, aDoc.ID)
	wantKind(t, "DocumentContent after delete", err, workflow.KindNotFound)
	_, err = f.Store.Traces(ctx, a.ID)
	wantKind(t, "Traces after delete", err, workflow.KindNotFound)
	_, err = f.Store.GetTrace(ctx, aTrace.ID)
	wantKind(t, "GetTrace after delete", err, workflow.KindNotFound)
	wantKind(t, "DeleteWorkflow twice", f.Store.DeleteWorkflow(ctx, a.ID), workflow.KindNotFound)
	_, err = f.Store.ClaimRound(ctx, a.ID, "instance-2", time.Minute)
	wantKind(t, "ClaimRound after delete", err, workflow.KindNotFound)
	_, _, err = f.Store.Commit(ctx, workflow.Commit{Workflow: a, ExpectedVersion: a.Version})
	wantKind(t, "Commit after delete", err, workflow.KindNotFound)

	list, _, err := f.Store.ListWorkflows(ctx, "alice", workflow.Page{})
	must(t, "ListWorkflows", err)
	if len(list) != 1 || list[0].ID != b.ID {
		t.Errorf("listing after delete has %d workflows, want only %s", len(list), b.ID)
	}
	running, err := f.Store.Running(ctx)
	must(t, "Running", err)
	if slices.Contains(running, a.ID) || !slices.Contains(running, b.ID) {
		t.Errorf("Running = %v, want %s and not the deleted %s", running, b.ID, a.ID)
	}
	if f.KeysLeft != nil {
		if n := f.KeysLeft(t, a.ID); n != 0 {
			t.Errorf("%d keys or index entries of %s left after delete", n, a.ID)
		}
		if n := f.KeysLeft(t, b.ID); n == 0 {
			t.Errorf("KeysLeft(%s) = 0 for a live workflow: the hook counts nothing", b.ID)
		}
	}
	if _, err := f.Store.DocumentContent(ctx, b.ID, bDoc.ID); err != nil {
		t.Errorf("B's document after deleting A: %v", err)
	}
	if _, err := f.Store.GetTrace(ctx, bTrace.ID); err != nil {
		t.Errorf("B's trace after deleting A: %v", err)
	}
}

// testRunning follows a workflow in and out of the running set.
func testRunning(t *testing.T, f Fixture) {
	ctx := context.Background()
	isRunning := func(id string) bool {
		t.Helper()
		ids, err := f.Store.Running(ctx)
		must(t, "Running", err)
		return slices.Contains(ids, id)
	}
	wf, _, _ := create(t, f.Store, newWorkflow("alice"))
	idle := newWorkflow("alice")
	idle.Status = workflow.StatusCompleted
	idle.StopReason = workflow.StopCompleted
	create(t, f.Store, idle)
	if !isRunning(wf.ID) || isRunning(idle.ID) {
		t.Fatalf("after create: running(%s) = %v, running(completed %s) = %v; want true, false",
			wf.ID, isRunning(wf.ID), idle.ID, isRunning(idle.ID))
	}
	done := wf.Clone()
	done.Status, done.StopReason = workflow.StatusCompleted, workflow.StopCompleted
	done, _, err := f.Store.Commit(ctx, workflow.Commit{Workflow: done, ExpectedVersion: wf.Version})
	must(t, "Commit(completed)", err)
	if isRunning(wf.ID) {
		t.Errorf("a completed workflow is still in the running set")
	}
	// A stale commit that would set it running again must not.
	stale := wf.Clone()
	_, _, err = f.Store.Commit(ctx, workflow.Commit{Workflow: stale, ExpectedVersion: wf.Version})
	wantKind(t, "stale commit", err, workflow.KindConflict)
	if isRunning(wf.ID) {
		t.Errorf("a stale commit put the completed workflow back in the running set")
	}
	again := done.Clone()
	again.Status, again.StopReason, again.Round = workflow.StatusRunning, "", 2
	_, _, err = f.Store.Commit(ctx, workflow.Commit{Workflow: again, ExpectedVersion: done.Version})
	must(t, "Commit(new round)", err)
	if !isRunning(wf.ID) {
		t.Errorf("a workflow running a new round is not in the running set")
	}
}

// testLeases makes two owners contend for one round and follows the
// fencing token: it grows with every lease taken and stays on renewal.
func testLeases(t *testing.T, f Fixture) {
	ctx := context.Background()
	wf, _, _ := create(t, f.Store, newWorkflow("alice"))
	claim := func(owner string) int64 {
		t.Helper()
		fence, err := f.Store.ClaimRound(ctx, wf.ID, owner, time.Minute)
		must(t, "ClaimRound("+owner+")", err)
		return fence
	}
	release := func(owner string) {
		t.Helper()
		must(t, "ReleaseRound("+owner+")", f.Store.ReleaseRound(ctx, wf.ID, owner))
	}
	steps := []struct {
		do   func() int64
		want int64
		name string
	}{
		{func() int64 { return claim("a") }, 1, "a claims a free round"},
		{func() int64 { return claim("b") }, 0, "b cannot take a's lease"},
		{func() int64 { return claim("a") }, 1, "a renews its lease, keeping its fence"},
		{func() int64 { release("b"); return claim("b") }, 0, "b's release does not free a's lease"},
		{func() int64 { release("a"); return claim("b") }, 2, "b claims after a released, with a greater fence"},
		{func() int64 { return claim("a") }, 0, "a cannot take b's lease"},
		{func() int64 { release("b"); return claim("b") }, 3, "b claiming again after its release takes a new fence"},
	}
	for _, s := range steps {
		if got := s.do(); got != s.want {
			t.Fatalf("%s: fence %d, want %d", s.name, got, s.want)
		}
	}
}

// testLeaseExpiry lets a lease run out: the other owner takes over with a
// greater fence, which outlives the expired lease, and (through
// ClaimRoundLoad, when the store is a RoundLoader) learns whose expired
// lease it took; a lease released before it ran out is no one's.
func testLeaseExpiry(t *testing.T, f Fixture) {
	ctx := context.Background()
	wf, _, _ := create(t, f.Store, newWorkflow("alice"))
	const ttl = time.Second
	fence, err := f.Store.ClaimRound(ctx, wf.ID, "a", ttl)
	must(t, "ClaimRound(a)", err)
	if fence != 1 {
		t.Fatalf("a claimed a free round with fence %d, want 1", fence)
	}
	fence, err = f.Store.ClaimRound(ctx, wf.ID, "b", ttl)
	must(t, "ClaimRound(b)", err)
	if fence != 0 {
		t.Fatalf("b took a's unexpired lease (fence %d)", fence)
	}
	if f.Advance != nil {
		f.Advance(ttl + 100*time.Millisecond)
	} else {
		time.Sleep(ttl + 100*time.Millisecond)
	}
	c, err := workflow.ClaimRoundLoad(ctx, f.Store, wf.ID, "b", time.Minute)
	must(t, "ClaimRoundLoad(b) after expiry", err)
	if c.Fence != 2 {
		t.Fatalf("b took over an expired lease with fence %d, want 2", c.Fence)
	}
	_, loader := f.Store.(workflow.RoundLoader)
	if loader && c.Expired != "a" {
		t.Errorf("b took over a's expired lease; Expired = %q, want a", c.Expired)
	}
	fence, err = f.Store.ClaimRound(ctx, wf.ID, "a", ttl)
	must(t, "ClaimRound(a) after takeover", err)
	if fence != 0 {
		t.Errorf("a renewed a lease it had lost (fence %d)", fence)
	}
	must(t, "ReleaseRound(b)", f.Store.ReleaseRound(ctx, wf.ID, "b"))
	c, err = workflow.ClaimRoundLoad(ctx, f.Store, wf.ID, "a", time.Minute)
	must(t, "ClaimRoundLoad(a) after b's release", err)
	if c.Fence != 3 || c.Expired != "" {
		t.Errorf("a claimed the lease b released: fence %d, Expired %q; want 3 and no one's", c.Fence, c.Expired)
	}
}

// testClaimRoundLoad checks workflow.ClaimRoundLoad, which uses the
// store's RoundLoader when it has one: a claim that takes or renews the
// lease returns the workflow and, while it runs, its messages, as the
// store's reads do; a busy lease returns neither; the fence is the
// lease's (a fenced commit takes it); a workflow no longer running comes
// without messages; an unknown or deleted one is KindNotFound.
func testClaimRoundLoad(t *testing.T, f Fixture) {
	ctx := context.Background()
	wf, _, _ := create(t, f.Store, newWorkflow("alice"))
	wf, _ = step(t, f.Store, wf, "work")
	other, _, _ := create(t, f.Store, newWorkflow("alice"))

	load := func(owner string, want int64) (*workflow.Workflow, []workflow.Message) {
		t.Helper()
		c, err := workflow.ClaimRoundLoad(ctx, f.Store, wf.ID, owner, time.Minute)
		must(t, "ClaimRoundLoad("+owner+")", err)
		fence, got, msgs := c.Fence, c.Workflow, c.Messages
		if fence != want {
			t.Fatalf("ClaimRoundLoad(%s) fence %d, want %d", owner, fence, want)
		}
		if c.Expired != "" { // free, renewed or released leases only here
			t.Fatalf("ClaimRoundLoad(%s) took an expired lease of %q; no lease expired", owner, c.Expired)
		}
		if fence == 0 {
			if got != nil || msgs != nil {
				t.Fatalf("ClaimRoundLoad(%s) on a busy lease returned the workflow (%v) or %d messages", owner, got != nil, len(msgs))
			}
			return nil, nil
		}
		stored, err := f.Store.GetWorkflow(ctx, wf.ID)
		must(t, "GetWorkflow", err)
		if !reflect.DeepEqual(got, stored) {
			t.Fatalf("ClaimRoundLoad(%s) workflow\n%+v\nwant GetWorkflow's\n%+v", owner, got, stored)
		}
		return got, msgs
	}

	got, msgs := load("a", 1)
	stored, err := f.Store.Messages(ctx, wf.ID, 0, 0)
	must(t, "Messages", err)
	if len(msgs) != 2 || !reflect.DeepEqual(msgs, stored) {
		t.Fatalf("ClaimRoundLoad messages\n%+v\nwant Messages'\n%+v", msgs, stored)
	}
	if got.Version != wf.Version || got.Status != workflow.StatusRunning {
		t.Fatalf("ClaimRoundLoad workflow at version %d, %s; want %d, running", got.Version, got.Status, wf.Version)
	}
	load("b", 0)
	if fence, err := f.Store.ClaimRound(ctx, wf.ID, "b", time.Minute); err != nil || fence != 0 {
		t.Fatalf("ClaimRound(b) after a's ClaimRoundLoad = %d, %v; want 0 (a holds the lease)", fence, err)
	}
	load("a", 1) // a renewal keeps the fence

	done := got.Clone()
	done.Status, done.StopReason = workflow.StatusCompleted, workflow.StopCompleted
	_, _, err = f.Store.Commit(ctx, workflow.Commit{Workflow: done, ExpectedVersion: got.Version, Fence: 1})
	must(t, "Commit with ClaimRoundLoad's fence", err)
	must(t, "ReleaseRound(a)", f.Store.ReleaseRound(ctx, wf.ID, "a"))
	if got, msgs = load("c", 2); got.Status != workflow.StatusCompleted || msgs != nil {
		t.Fatalf("ClaimRoundLoad of a completed workflow: status %s, %d messages; want completed, none", got.Status, len(msgs))
	}

	_, err = workflow.ClaimRoundLoad(ctx, f.Store, workflow.NewID(workflow.PrefixWorkflow), "a", time.Minute)
	wantKind(t, "ClaimRoundLoad of an unknown workflow", err, workflow.KindNotFound)
	must(t, "DeleteWorkflow", f.Store.DeleteWorkflow(ctx, other.ID))
	_, err = workflow.ClaimRoundLoad(ctx, f.Store, other.ID, "a", time.Minute)
	wantKind(t, "ClaimRoundLoad of a deleted workflow", err, workflow.KindNotFound)
}
