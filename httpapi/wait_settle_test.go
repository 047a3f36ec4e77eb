package httpapi

import (
	"context"
	"testing"
	"time"

	"github.com/twostep/twostep/workflow"
)

// TestRoundEndAnswersWaitersAtOnce: a round that ends on this instance
// (its end published to the change service) answers its waiters without
// the store poll, with the workflow and messages as published; a request
// that starts waiting just after the end reads the store at once. The
// poll is an hour, so only the published change or the first read can
// answer within the test's deadline.
func TestRoundEndAnswersWaitersAtOnce(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, nil)
	env.srv.waitPoll = time.Hour
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	waiting := testWorkflow("alice", workflow.StatusRunning)
	env.store.put(waiting)
	got := make(chan settledRound, 1)
	go func() { got <- env.srv.awaitRound(ctx, waiting.ID, waiting.Round) }()
	for env.changes.watching(waiting.ID) == 0 {
		time.Sleep(time.Millisecond)
	}
	done := waiting.Clone()
	done.Status, done.StopReason = workflow.StatusCompleted, workflow.StopCompleted
	msgs := []workflow.Message{{ID: "m1", WorkflowID: done.ID, Round: done.Round, Role: workflow.RoleUser}}
	env.changes.Publish(workflow.Change{WorkflowID: "wf_other", Ended: done}) // another workflow's: not this waiter's
	env.changes.Publish(workflow.Change{WorkflowID: done.ID})                 // a step's commit: no answer yet
	env.changes.Publish(workflow.Change{WorkflowID: done.ID, Ended: done, Messages: msgs})
	if r := <-got; r.w != done || len(r.msgs) != 1 || &r.msgs[0] != &msgs[0] {
		t.Fatalf("the waiter got %+v, want the ended workflow and the messages published with it", r)
	}
	if gets := env.store.getCount(); gets != 1 || env.changes.watching(waiting.ID) != 0 {
		t.Errorf("%d store reads, %d subscriptions left; want only the first read and none", gets, env.changes.watching(waiting.ID))
	}

	// Ended before anyone waited: the wait answers from its first read.
	early := testWorkflow("alice", workflow.StatusCompleted)
	env.store.put(early)
	if r := env.srv.awaitRound(ctx, early.ID, early.Round); r.w == nil || r.w.ID != early.ID || r.w.Status != workflow.StatusCompleted || r.msgs != nil {
		t.Fatalf("wait after the end = %+v, want the completed workflow (messages to be read)", r)
	}
	if gets := env.store.getCount(); gets != 2 || env.changes.watching(early.ID) != 0 {
		t.Errorf("%d store reads in all, %d subscriptions left; want 2 and none", gets, env.changes.watching(early.ID))
	}

	// An earlier round's end does not answer a wait on a later round.
	later := testWorkflow("alice", workflow.StatusRunning)
	later.Round = 2
	env.store.put(later)
	short, stop := context.WithTimeout(ctx, 50*time.Millisecond)
	defer stop()
	go func() {
		for env.changes.watching(later.ID) == 0 {
			time.Sleep(time.Millisecond)
		}
		old := later.Clone()
		old.Round, old.Status = 1, workflow.StatusCompleted
		env.changes.Publish(workflow.Change{WorkflowID: later.ID, Ended: old})
	}()
	if r := env.srv.awaitRound(short, later.ID, later.Round); r.w != nil {
		t.Errorf("round 1's end answered a wait on round 2: %+v", r)
	}

	// A round still running keeps waiting (here until its context ends).
	still := testWorkflow("alice", workflow.StatusRunning)
	env.store.put(still)
	gone, stopGone := context.WithCancel(ctx)
	stopGone()
	if r := env.srv.awaitRound(gone, still.ID, still.Round); r.w != nil {
		t.Errorf("wait on a running round answered %+v", r)
	}
}

// getCount returns how many times the workflow was read.
func (s *fakeStore) getCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gets
}
