package actionplan_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/workflow"
)

// holdEcho holds every Echo call for a decision.
type holdEcho struct{}

func (holdEcho) NeedsApproval(action string, _ map[string]any) (bool, workflow.Effect) {
	return action == enginetest.Echo, workflow.EffectWrite
}
func (holdEcho) NeedsIntentApproval(string) bool                    { return false }
func (holdEcho) ConstraintFragmentProblems(map[string]any) []string { return nil }
func (holdEcho) ConstraintProblems(_, _ map[string]any) []string    { return nil }

// TestPlanPausesBeforeEachWriteStep: a plan of two held echo steps pauses
// before each; the first is approved and runs, the second is rejected and
// the plan goes on to its end, listing what was done.
func TestPlanPausesBeforeEachWriteStep(t *testing.T) {
	t.Parallel()
	store, reg := newStore(), enginetest.NewRegistry()
	cfg := testConfig("a")
	cfg.Approvals = holdEcho{}
	model := scripted.New(planJSON(echo("alpha", ""), echo("beta", "")))
	e := startEngine(t, cfg, store, model, reg)
	ctx := context.Background()
	wf := wait(t, e, create(t, e, "echo alpha then beta", 5).ID)
	if wf.Status != workflow.StatusAwaitingApproval || wf.PendingApproval.Parameters["text"] != "alpha" || wf.PendingApproval.Step != 1 {
		t.Fatalf("after planning: %s %+v, want paused at step 1 (alpha)", wf.Status, wf.PendingApproval)
	}
	if _, err := e.Decide(ctx, "alice", wf.ID, wf.PendingApproval.ID, workflow.Decision{Approve: true}); err != nil {
		t.Fatal(err)
	}
	wf = wait(t, e, wf.ID)
	if wf.Status != workflow.StatusAwaitingApproval || wf.PendingApproval.Parameters["text"] != "beta" || wf.PendingApproval.Step != 2 {
		t.Fatalf("after step 1: %s %+v, want paused at step 2 (beta)", wf.Status, wf.PendingApproval)
	}
	if _, err := e.Decide(ctx, "alice", wf.ID, wf.PendingApproval.ID, workflow.Decision{Comment: "enough"}); err != nil {
		t.Fatal(err)
	}
	wf = wait(t, e, wf.ID)
	if wf.Status != workflow.StatusCompleted {
		t.Fatalf("ended %s (%s), want completed", wf.Status, wf.Error)
	}
	if calls := reg.Calls(); len(calls) != 1 || calls[0].Parameters["text"] != "alpha" {
		t.Errorf("executions = %+v, want only alpha", calls)
	}
	want := []shape{
		{1, 0, workflow.RoleUser, "", ""},
		{1, 1, workflow.RoleAction, enginetest.Echo, workflow.MessageSuccess},
		{1, 2, workflow.RoleAction, enginetest.Echo, workflow.MessageRejected},
		{1, 3, workflow.RoleAssistant, "", ""},
	}
	if diff := cmp.Diff(want, shapes(messages(t, store, wf.ID))); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if n := len(model.Calls()); n != 1 {
		t.Errorf("%d model calls, want the one planning call", n)
	}
}
