package react_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/workflow"
)

// TestApprovalCrashAfterPauseCommit: the instance that paused the round
// dies right after the pause commit, before it could release its lease.
// Another instance takes the decision and runs the approved step exactly
// once (after the dead holder's lease expires), and nothing the dead
// instance did is repeated: Stage 1 and Stage 2 of the held step are not
// asked again.
func TestApprovalCrashAfterPauseCommit(t *testing.T) {
	t.Parallel()
	for name, newStore := range approvalStores(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			shared := newStore(t)
			reg := enginetest.NewRegistry()
			script := &sharedScript{replies: replies(enginetest.Echoes("hello"), enginetest.Completes("done"))}
			// Step commits of the held step: select, parameterize, pause.
			dying := enginetest.NewDyingStore(shared, 3)
			one := startEngine(t, approvalConfig(), dying, script.model(dying.Dead), reg)
			wf := create(t, one, "say hello", 5)
			select {
			case <-dying.Died():
			case <-time.After(10 * time.Second):
				t.Fatal("instance one never committed the pause")
			}
			paused, err := shared.GetWorkflow(context.Background(), wf.ID)
			if err != nil {
				t.Fatal(err)
			}
			if paused.Status != workflow.StatusAwaitingApproval || paused.PendingApproval == nil {
				t.Fatalf("after the crash the workflow is %s, want awaiting_approval with its approval", paused.Status)
			}
			two := startEngine(t, approvalConfig(), shared, script.model(nil), reg)
			if _, err := two.Decide(context.Background(), "alice", wf.ID, paused.PendingApproval.ID, workflow.Decision{Approve: true}); err != nil {
				t.Fatalf("Decide on instance two: %v", err)
			}
			done := wait(t, two, wf.ID)
			if done.Status != workflow.StatusCompleted {
				t.Fatalf("ended %s (%s), want completed", done.Status, done.Error)
			}
			if calls := reg.Calls(); len(calls) != 1 || calls[0].Parameters["text"] != "hello" {
				t.Errorf("executions = %+v, want the approved echo exactly once", calls)
			}
			// Stage 1 + Stage 2 of the held step before the crash, Stage 1 +
			// Stage 2 of the completing step after: nothing repeated.
			if got, want := script.stages(), []workflow.Stage{s1, s2, s1, s2}; !slices.Equal(got, want) {
				t.Errorf("finished model calls = %v, want %v", got, want)
			}
		})
	}
}

// TestApprovalCrashAfterDecisionCommit: the instance that took the
// decision dies right after committing it, before running the step. A
// third instance picks the approved round up and runs the step exactly
// once, with the approved (edited) parameters, and does not ask for the
// approval again.
func TestApprovalCrashAfterDecisionCommit(t *testing.T) {
	t.Parallel()
	for name, newStore := range approvalStores(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			shared := newStore(t)
			reg := enginetest.NewRegistry()
			script := &sharedScript{replies: replies(enginetest.Echoes("hello"), enginetest.Completes("done"))}
			one := startEngine(t, approvalConfig(), shared, script.model(nil), reg)
			paused := wait(t, one, create(t, one, "say hello", 5).ID)
			if paused.Status != workflow.StatusAwaitingApproval || paused.PendingApproval == nil {
				t.Fatalf("round ended %s, want awaiting_approval", paused.Status)
			}
			if err := one.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			// The decision is instance two's first step commit; it dies
			// right after it.
			dying := enginetest.NewDyingStore(shared, 1)
			two := startEngine(t, approvalConfig(), dying, script.model(dying.Dead), reg)
			edited := map[string]any{"text": "edited"}
			if _, err := two.Decide(context.Background(), "alice", paused.ID, paused.PendingApproval.ID,
				workflow.Decision{Approve: true, Parameters: edited}); err != nil {
				t.Fatalf("Decide on instance two: %v", err)
			}
			if !dying.Dead() {
				t.Fatal("instance two did not die after the decision commit")
			}
			if n := len(reg.Calls()); n != 0 {
				t.Fatalf("the step ran %d times on the dying instance", n)
			}
			three := startEngine(t, approvalConfig(), shared, script.model(nil), reg)
			done := wait(t, three, paused.ID)
			if done.Status != workflow.StatusCompleted || done.PendingApproval != nil {
				t.Fatalf("ended %s with pending %+v (%s), want completed", done.Status, done.PendingApproval, done.Error)
			}
			if calls := reg.Calls(); len(calls) != 1 || calls[0].Parameters["text"] != "edited" {
				t.Errorf("executions = %+v, want the edited echo exactly once", calls)
			}
			msgs := messages(t, shared, paused.ID)
			if len(msgs) < 2 || msgs[1].Role != workflow.RoleAction || msgs[1].Status != workflow.MessageSuccess {
				t.Errorf("messages %+v, want the approved step committed as a success", shapes(msgs))
			}
		})
	}
}
