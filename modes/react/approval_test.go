package react_test

import (
	"context"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/workflow"
)

// echoNeedsApproval holds every Echo call for a decision, as a write.
type echoNeedsApproval struct{}

func (echoNeedsApproval) NeedsApproval(action string, _ map[string]any) (bool, workflow.Effect) {
	return action == enginetest.Echo, workflow.EffectWrite
}
func (echoNeedsApproval) NeedsIntentApproval(string) bool                    { return false }
func (echoNeedsApproval) ConstraintFragmentProblems(map[string]any) []string { return nil }
func (echoNeedsApproval) ConstraintProblems(_, _ map[string]any) []string    { return nil }

// approvalStores runs each approval test on the memory store and, with
// REDIS_URL, on Redis.
func approvalStores(t *testing.T) map[string]func(testing.TB) workflow.Store {
	stores := map[string]func(testing.TB) workflow.Store{"memory": func(testing.TB) workflow.Store { return memstore.New() }}
	if os.Getenv("REDIS_URL") != "" {
		stores["redis"] = redisStores(t)
	}
	return stores
}

func approvalConfig() engine.Config {
	cfg := testConfig("a")
	cfg.Approvals = echoNeedsApproval{}
	return cfg
}

// pausedAt starts a round whose first step is echo(text) and waits for it
// to pause; it returns the engine, the paused workflow and the model.
func pausedAt(t *testing.T, store workflow.Store, reg *enginetest.Registry, cfg engine.Config, after ...[]string) (*enginetest.Engine, *workflow.Workflow, *scripted.Model) {
	t.Helper()
	model := scripted.New(replies(append([][]string{enginetest.Echoes("hello")}, after...)...)...)
	e := startEngine(t, cfg, store, model, reg)
	wf := wait(t, e, create(t, e, "say hello", 5).ID)
	if wf.Status != workflow.StatusAwaitingApproval || wf.PendingApproval == nil {
		t.Fatalf("round ended %s (%s), want awaiting_approval with a pending approval", wf.Status, wf.Error)
	}
	if n := len(reg.Calls()); n != 0 {
		t.Fatalf("the held action ran %d times before any decision", n)
	}
	return e, wf, model
}

// TestApprovalPausesThenApproveRuns: the held step pauses the round with
// its pending approval (action, objective, parameters, effect, deadline);
// approving runs it exactly once with the step's idempotency key and the
// round goes on to complete.
func TestApprovalPausesThenApproveRuns(t *testing.T) {
	t.Parallel()
	for name, newStore := range approvalStores(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			store, reg := newStore(t), enginetest.NewRegistry()
			e, wf, _ := pausedAt(t, store, reg, approvalConfig(), enginetest.Completes("said it"))
			p := wf.PendingApproval
			if p.Action != enginetest.Echo || p.Parameters["text"] != "hello" || p.Effect != workflow.EffectWrite ||
				p.Round != 1 || p.Step != 1 || !strings.HasPrefix(p.ID, workflow.PrefixApproval) ||
				p.ExpiresAt.Sub(p.RequestedAt) != engine.DefaultApprovalTimeout {
				t.Errorf("pending approval = %+v", p)
			}
			if _, err := e.Decide(context.Background(), "bob", wf.ID, p.ID, workflow.Decision{Approve: true}); workflow.KindOf(err) != workflow.KindNotFound {
				t.Errorf("bob's decision = %v, want not found", err)
			}
			got, err := e.Decide(context.Background(), "alice", wf.ID, p.ID, workflow.Decision{Approve: true})
			if err != nil || got.Status != workflow.StatusRunning || got.PendingApproval != nil {
				t.Fatalf("Decide = %+v, %v; want running with no pending approval", got, err)
			}
			done := wait(t, e, wf.ID)
			if done.Status != workflow.StatusCompleted {
				t.Fatalf("round ended %s (%s), want completed", done.Status, done.Error)
			}
			calls := reg.Calls()
			if len(calls) != 1 || calls[0].IdempotencyKey != wf.ID+":1:1" || calls[0].Parameters["text"] != "hello" {
				t.Errorf("executions = %+v, want one echo hello with key %s:1:1", calls, wf.ID)
			}
			if _, err := e.Decide(context.Background(), "alice", wf.ID, p.ID, workflow.Decision{Approve: true}); workflow.KindOf(err) != workflow.KindConflict {
				t.Errorf("a second decision = %v, want conflict", err)
			}
		})
	}
}

// TestApprovalEditedParameters: an approval with edited parameters runs
// the step with them; invalid edits (schema, or a field Stage 1 did not
// ask for) are refused with path lines and the approval stays pending.
func TestApprovalEditedParameters(t *testing.T) {
	t.Parallel()
	store, reg := memstore.New(), enginetest.NewRegistry()
	e, wf, _ := pausedAt(t, store, reg, approvalConfig(), enginetest.Completes("ok"))
	ctx := context.Background()
	id := wf.PendingApproval.ID
	for _, bad := range []map[string]any{{"text": 42}, {"text": "x", "message": "not asked"}, {}} {
		_, err := e.Decide(ctx, "alice", wf.ID, id, workflow.Decision{Approve: true, Parameters: bad})
		if workflow.KindOf(err) != workflow.KindInvalid {
			t.Errorf("edit %v = %v, want invalid", bad, err)
		}
	}
	still, err := e.Get(ctx, "alice", wf.ID)
	if err != nil || still.Status != workflow.StatusAwaitingApproval || still.PendingApproval.ID != id {
		t.Fatalf("after invalid edits: %+v, %v; want the same approval pending", still, err)
	}
	if _, err := e.Decide(ctx, "alice", wf.ID, id, workflow.Decision{Approve: true, Parameters: map[string]any{"text": "edited"}}); err != nil {
		t.Fatal(err)
	}
	wait(t, e, wf.ID)
	if calls := reg.Calls(); len(calls) != 1 || calls[0].Parameters["text"] != "edited" {
		t.Errorf("executions = %+v, want one echo with the edited text", calls)
	}
	msgs := messages(t, store, wf.ID)
	if m := msgs[1]; m.Role != workflow.RoleAction || m.Parameters["text"] != "edited" {
		t.Errorf("action message = %+v, want the edited parameters recorded", m)
	}
}

// TestApprovalRejectGoesOn: a rejection records the step as rejected with
// the comment, never runs the action, and the next Stage 1 prompt shows it.
func TestApprovalRejectGoesOn(t *testing.T) {
	t.Parallel()
	for name, newStore := range approvalStores(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			store, reg := newStore(t), enginetest.NewRegistry()
			e, wf, model := pausedAt(t, store, reg, approvalConfig(), enginetest.Completes("did not say it"))
			if _, err := e.Decide(context.Background(), "alice", wf.ID, wf.PendingApproval.ID,
				workflow.Decision{Comment: "not to this customer"}); err != nil {
				t.Fatal(err)
			}
			done := wait(t, e, wf.ID)
			if done.Status != workflow.StatusCompleted || len(reg.Calls()) != 0 {
				t.Fatalf("round ended %s with %d executions, want completed with none", done.Status, len(reg.Calls()))
			}
			msgs := messages(t, store, wf.ID)
			rej := msgs[1]
			if rej.Status != workflow.MessageRejected || rej.Step != 1 || !strings.Contains(rej.Summary, "rejected") ||
				!strings.Contains(rej.Summary, "not to this customer") {
				t.Errorf("rejection message = %+v", rej)
			}
			calls := model.Calls()
			last := calls[len(calls)-2] // the Stage 1 call after the rejection
			if last.Stage != workflow.StageOne || !strings.Contains(last.Text(), "a person rejected it; comment: not to this customer") {
				t.Errorf("the next Stage 1 prompt does not show the rejection:\n%s", last.Text())
			}
			if done.Step != 2 {
				t.Errorf("completed at step %d, want 2 (the rejected step counts)", done.Step)
			}
		})
	}
}

// TestApprovalExpiry: an approval past its deadline is rejected with
// comment "expired" by ExpireApprovals, and a late decision is refused.
func TestApprovalExpiry(t *testing.T) {
	t.Parallel()
	var now atomic.Int64
	now.Store(time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC).UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()).UTC() }
	store, reg := memstore.New(), enginetest.NewRegistry()
	cfg := approvalConfig()
	cfg.ApprovalTimeout = time.Hour
	cfg.Now = clock
	e, wf, _ := pausedAt(t, store, reg, cfg, enginetest.Completes("gave up"))
	ctx := context.Background()
	if n, err := e.ExpireApprovals(ctx); err != nil || n != 0 {
		t.Fatalf("ExpireApprovals before the deadline = %d, %v", n, err)
	}
	now.Add(int64(61 * time.Minute))
	if _, err := e.Decide(ctx, "alice", wf.ID, wf.PendingApproval.ID, workflow.Decision{Approve: true}); workflow.KindOf(err) != workflow.KindConflict ||
		!strings.Contains(err.Error(), "expired") {
		t.Fatalf("late decision = %v, want conflict saying it expired", err)
	}
	done := wait(t, e, wf.ID)
	msgs := messages(t, store, wf.ID)
	if done.Status != workflow.StatusCompleted || msgs[1].Status != workflow.MessageRejected || !strings.Contains(msgs[1].Summary, "expired") {
		t.Errorf("after expiry: %s, message %+v", done.Status, msgs[1])
	}
	if len(reg.Calls()) != 0 {
		t.Error("an expired approval ran the action")
	}
}

// TestApprovalStopAndResume: stop cancels the pending approval; resume
// asks again with a new approval; approving that one runs the step once.
func TestApprovalStopAndResume(t *testing.T) {
	t.Parallel()
	store, reg := memstore.New(), enginetest.NewRegistry()
	e, wf, _ := pausedAt(t, store, reg, approvalConfig(), enginetest.Completes("done"))
	ctx := context.Background()
	first := wf.PendingApproval.ID
	stopped, err := e.Stop(ctx, "alice", wf.ID)
	if err != nil || stopped.Status != workflow.StatusStopped || stopped.PendingApproval != nil {
		t.Fatalf("Stop = %+v, %v; want stopped with the approval cancelled", stopped, err)
	}
	if _, err := e.Decide(ctx, "alice", wf.ID, first, workflow.Decision{Approve: true}); workflow.KindOf(err) != workflow.KindConflict {
		t.Errorf("decision after stop = %v, want conflict", err)
	}
	if _, err := e.Resume(ctx, "alice", wf.ID); err != nil {
		t.Fatal(err)
	}
	again := wait(t, e, wf.ID)
	if again.Status != workflow.StatusAwaitingApproval || again.PendingApproval == nil || again.PendingApproval.ID == first {
		t.Fatalf("after resume: %s %+v, want a new pending approval", again.Status, again.PendingApproval)
	}
	if _, err := e.Decide(ctx, "alice", wf.ID, again.PendingApproval.ID, workflow.Decision{Approve: true}); err != nil {
		t.Fatal(err)
	}
	if done := wait(t, e, wf.ID); done.Status != workflow.StatusCompleted || len(reg.Calls()) != 1 {
		t.Errorf("ended %s with %d executions, want completed with one", done.Status, len(reg.Calls()))
	}
}

// TestPausedRoundsDoNotCountAgainstTheLimit: with a running limit of 1, a
// paused round leaves room for another.
func TestPausedRoundsDoNotCountAgainstTheLimit(t *testing.T) {
	t.Parallel()
	store, reg := memstore.New(), enginetest.NewRegistry()
	cfg := approvalConfig()
	cfg.MaxRunningPerUser = 1
	e, _, _ := pausedAt(t, store, reg, cfg)
	if _, err := e.Create(context.Background(), engine.NewWorkflow{UserID: "alice", Prompt: "another"}); err != nil {
		t.Errorf("a second round with one paused: %v", err)
	}
}

// TestApprovalSurvivesInstances: the pause is committed state, not a
// held worker: the instance that paused shuts down, another decides and
// runs the step exactly once; an instance shut down right after deciding
// leaves the approved step to the next one, which runs it once.
func TestApprovalSurvivesInstances(t *testing.T) {
	t.Parallel()
	store := memstore.New()
	reg := enginetest.NewRegistry()
	model := scripted.New(replies(enginetest.Echoes("one"), enginetest.Completes("x"))...)
	ctx := context.Background()

	cfgA := approvalConfig()
	a, err := enginetest.NewEngine(cfgA, store, model, reg, map[workflow.ModeName]workflow.Mode{workflow.ModeReact: newMode(t)})
	if err != nil {
		t.Fatal(err)
	}
	a.Start(ctx)
	wf := wait(t, a, create(t, a, "one", 5).ID)
	if wf.Status != workflow.StatusAwaitingApproval {
		t.Fatalf("status %s, want awaiting_approval", wf.Status)
	}
	// The deciding instance commits the decision and stops before running
	// the step (not started: its runner never picks the round up).
	decider, err := engine.New(testConfig("decider"), store, model, reg, map[workflow.ModeName]workflow.Mode{workflow.ModeReact: newMode(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := decider.Decide(ctx, "alice", wf.ID, wf.PendingApproval.ID, workflow.Decision{Approve: true}); err != nil {
		t.Fatal(err)
	}
	if n := len(reg.Calls()); n != 0 {
		t.Fatalf("the step ran %d times before any instance picked the round up", n)
	}
	b := startEngine(t, approvalConfig(), store, model, reg)
	done := wait(t, b, wf.ID)
	if done.Status != workflow.StatusCompleted || len(reg.Calls()) != 1 {
		t.Errorf("ended %s with %d executions, want completed with exactly one", done.Status, len(reg.Calls()))
	}
}
