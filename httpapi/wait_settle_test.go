package httpapi

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/twostep/twostep/workflow"
)

// TestRoundEndedAnswersWaitersAtOnce: a round that ends on this instance
// (Server.RoundEnded) answers its waiters without the store poll, whether
// the request was already waiting or starts waiting just after the end
// (then with one read of the store). The poll is an hour, so only the
// hook can answer within the test's deadline.
func TestRoundEndedAnswersWaitersAtOnce(t *testing.T) {
	t.Parallel()
	store := newFakeStore()
	n := newNotifier(workflow.NewReader(store))
	n.poll = time.Hour
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	waiting := testWorkflow("alice", workflow.StatusRunning)
	store.put(waiting)
	got := make(chan settledRound, 1)
	go func() { got <- n.wait(ctx, waiting.ID, waiting.Round) }()
	for n.waiting(waiting.ID) == 0 {
		runtime.Gosched()
	}
	done := waiting.Clone()
	done.Status, done.StopReason = workflow.StatusCompleted, workflow.StopCompleted
	msgs := []workflow.Message{{ID: "m1", WorkflowID: done.ID, Round: done.Round, Role: workflow.RoleUser}}
	n.settle(done, msgs)
	if r := <-got; r.w != done || len(r.msgs) != 1 || &r.msgs[0] != &msgs[0] {
		t.Fatalf("the waiter got %+v, want the ended workflow and the messages handed to settle", r)
	}
	if store.gets != 0 || n.waiting(waiting.ID) != 0 {
		t.Errorf("%d store reads, %d waiters left; want none", store.gets, n.waiting(waiting.ID))
	}

	// Ended before anyone waited: the next wait reads the store at once.
	early := testWorkflow("alice", workflow.StatusCompleted)
	store.put(early)
	n.settle(early, nil)
	if r := n.wait(ctx, early.ID, early.Round); r.w == nil || r.w.ID != early.ID || r.w.Status != workflow.StatusCompleted || r.msgs != nil {
		t.Fatalf("wait after the end = %+v, want the completed workflow (messages to be read)", r)
	}
	if store.gets != 1 || n.waiting(early.ID) != 0 {
		t.Errorf("%d store reads, %d waiters left; want 1 and none", store.gets, n.waiting(early.ID))
	}

	// A round still running whose id was never settled keeps waiting
	// (here until its context ends).
	still := testWorkflow("alice", workflow.StatusRunning)
	store.put(still)
	short, stop := context.WithCancel(ctx)
	stop()
	if r := n.wait(short, still.ID, still.Round); r.w != nil {
		t.Errorf("wait on a running round answered %+v", r)
	}
}

// TestSettleRemembersABoundedNumberOfIDs: ids of rounds nobody waited on
// are kept for two generations of recentIDs, then forgotten.
func TestSettleRemembersABoundedNumberOfIDs(t *testing.T) {
	t.Parallel()
	n := newNotifier(workflow.NewReader(newFakeStore()))
	first := testWorkflow("alice", workflow.StatusCompleted)
	n.settle(first, nil)
	for range 2 * recentIDs {
		n.settle(testWorkflow("alice", workflow.StatusCompleted), nil)
	}
	if _, ok := n.recent[first.ID]; ok {
		t.Error("the oldest id is still in the newest generation")
	}
	if _, ok := n.older[first.ID]; ok {
		t.Error("the oldest id outlived two generations")
	}
	if len(n.recent)+len(n.older) > 2*recentIDs {
		t.Errorf("%d ids remembered, want at most %d", len(n.recent)+len(n.older), 2*recentIDs)
	}
}

// waiting returns how many requests wait on id.
func (n *notifier) waiting(id string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.waiters[id])
}
