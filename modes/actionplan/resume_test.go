package actionplan_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/workflow"
)

// An instance crashing after the plan was saved (or after any plan step)
// loses nothing: another instance continues the saved plan once the lease
// expires, with no new planning call and no step run twice into the
// record.
func TestCrashAfterPlanningResumesWithoutReplanning(t *testing.T) {
	t.Parallel()
	plan := planJSON(echo("a", "first"), echo("b", "", "docList:first"), complete("done"))
	wantShapes := []shape{
		{1, 0, workflow.RoleUser, "", ""},
		{1, 1, workflow.RoleAction, enginetest.Echo, workflow.MessageSuccess},
		{1, 2, workflow.RoleAction, enginetest.Echo, workflow.MessageSuccess},
		{1, 3, workflow.RoleAssistant, "", ""},
	}
	// The runner commits: the plan, step 1, step 2, then the final message.
	for _, n := range []int{1, 2, 3} {
		t.Run("after commit "+string(rune('0'+n)), func(t *testing.T) {
			t.Parallel()
			mem := newStore()
			dying := enginetest.NewDyingStore(mem, n)
			reg := enginetest.NewRegistry()
			first := scripted.New(plan)
			e1 := startEngine(t, enginetest.TakeoverConfig("one"), dying, first, reg)
			wf := create(t, e1, "echo a, then b with a's output", 5)
			select {
			case <-dying.Died():
			case <-time.After(10 * time.Second):
				t.Fatal("instance one never reached its crash point")
			}
			mid, err := mem.GetWorkflow(context.Background(), wf.ID)
			if err != nil {
				t.Fatal(err)
			}
			if cp, st := mid.Checkpoint, planOf(t, mid.Checkpoint); cp == nil || cp.Phase != workflow.PhaseExecute || len(st.Plan) != 3 || st.PlanIndex != n-1 {
				t.Fatalf("saved checkpoint = %+v, want phase execute with the 3-step plan at index %d", cp, n-1)
			}
			second := scripted.New() // any model call fails the round
			e2 := startEngine(t, testConfig("two"), mem, second, reg)
			got := wait(t, e2, wf.ID)
			if got.Status != workflow.StatusCompleted || got.StopReason != workflow.StopCompleted {
				t.Fatalf("ended %s/%s (%s), want completed", got.Status, got.StopReason, got.Error)
			}
			if calls := len(first.Calls()) + len(second.Calls()); calls != 1 || got.Stats.LLMCalls != 1 {
				t.Errorf("%d model calls (stats %d), want the one planning call", calls, got.Stats.LLMCalls)
			}
			msgs := messages(t, mem, wf.ID)
			if diff := cmp.Diff(wantShapes, shapes(msgs)); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
			if !strings.Contains(msgs[2].Text, "b") || msgs[3].Text != "done" {
				t.Errorf("messages = %q, %q", msgs[2].Text, msgs[3].Text)
			}
		})
	}
}

// After the failure breaker ends a round, Resume continues the saved plan
// at the step after the last failure, again without planning (re-planning
// off).
func TestResumeAfterBreakerContinuesThePlan(t *testing.T) {
	t.Parallel()
	store, reg := newStore(), enginetest.NewRegistry()
	broken := step{Action: enginetest.Broken}
	model := scripted.New(planJSON(broken, broken, broken, echo("after", ""), complete("done")))
	e := startEngineWith(t, noReplan, testConfig("a"), store, model, reg)
	wf := wait(t, e, create(t, e, "try hard", 10).ID)
	if wf.Status != workflow.StatusFailed || wf.StopReason != workflow.StopFailures {
		t.Fatalf("ended %s/%s, want failed/failures", wf.Status, wf.StopReason)
	}
	if cp := wf.Checkpoint; cp == nil || planOf(t, cp).PlanIndex != 3 {
		t.Fatalf("checkpoint = %+v, want the plan saved at index 3", wf.Checkpoint)
	}
	if _, err := e.Resume(context.Background(), "alice", wf.ID); err != nil {
		t.Fatalf("Resume: %v", err)
	}
	got := wait(t, e, wf.ID)
	if got.Status != workflow.StatusCompleted || got.StopReason != workflow.StopCompleted || got.Stats.LLMCalls != 1 {
		t.Fatalf("after resume %s/%s with %d model calls, want completed with 1", got.Status, got.StopReason, got.Stats.LLMCalls)
	}
	calls := reg.Calls()
	if last := calls[len(calls)-1]; last.Action != enginetest.Echo || last.IdempotencyKey != wf.ID+":1:4" {
		t.Errorf("last execution = %s (%s), want echo as step 4", last.Action, last.IdempotencyKey)
	}
}

// Stop cancels the in-flight planning call; Resume plans again (nothing
// was saved) and runs the new plan.
func TestStopDuringPlanningThenResume(t *testing.T) {
	t.Parallel()
	entered := make(chan struct{})
	plan := planJSON(echo("a", ""), complete("done"))
	model := &scripted.Model{Reply: func(n int, _ workflow.ModelRequest) (string, error) {
		if n == 0 {
			close(entered)
			return "", scripted.ErrBlock
		}
		return plan, nil
	}}
	store, reg := newStore(), enginetest.NewRegistry()
	e := startEngine(t, testConfig("a"), store, model, reg)
	wf := create(t, e, "echo a", 5)
	<-entered
	stopped, err := e.Stop(context.Background(), "alice", wf.ID)
	if err != nil || stopped.Status != workflow.StatusStopped {
		t.Fatalf("Stop = %+v, %v; want stopped", stopped, err)
	}
	if _, err := e.Resume(context.Background(), "alice", wf.ID); err != nil {
		t.Fatalf("Resume: %v", err)
	}
	got := wait(t, e, wf.ID)
	if got.Status != workflow.StatusCompleted || got.StopReason != workflow.StopCompleted || got.Stats.Actions != 1 {
		t.Fatalf("after resume %s/%s with %d actions, want completed with 1", got.Status, got.StopReason, got.Stats.Actions)
	}
	calls := model.Calls()
	if len(calls) != 2 || calls[0].Err == nil || calls[1].Stage != workflow.StagePlan {
		t.Errorf("model calls = %+v, want a cancelled plan call then a new one", calls)
	}
}
