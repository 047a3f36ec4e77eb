package actionplan_test

import (
	"context"
	"testing"

	"github.com/twostep/twostep/approval"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/workflow"
)

// intentEcho holds Echo for an intent approval; constraints are judged by
// approval.Policy, whose constraint methods need no registry.
type intentEcho struct{ checker *approval.Policy }

func (intentEcho) NeedsApproval(action string, _ map[string]any) (bool, workflow.Effect) {
	return action == enginetest.Echo, workflow.EffectWrite
}
func (intentEcho) NeedsIntentApproval(action string) bool { return action == enginetest.Echo }
func (p intentEcho) ConstraintFragmentProblems(c map[string]any) []string {
	return p.checker.ConstraintFragmentProblems(c)
}
func (p intentEcho) ConstraintProblems(c, params map[string]any) []string {
	return p.checker.ConstraintProblems(c, params)
}

// TestPlanIntentPausesBeforeTheStep: in action-plan mode a step under the
// intent rule pauses before it runs as kind intent with the planned
// parameters (there is no Stage 2 to narrow); constraints the plan breaks
// are refused (422) and the intent stays pending; constraints it meets,
// remembered for the workflow, let the plan's next matching step run
// without a pause.
func TestPlanIntentPausesBeforeTheStep(t *testing.T) {
	t.Parallel()
	store, reg := newStore(), enginetest.NewRegistry()
	cfg := testConfig("a")
	cfg.Approvals = intentEcho{checker: &approval.Policy{}}
	model := scripted.New(planJSON(echo("alpha", ""), echo("alpha", "")))
	e := startEngine(t, cfg, store, model, reg)
	ctx := context.Background()
	wf := wait(t, e, create(t, e, "echo alpha twice", 5).ID)
	p := wf.PendingApproval
	if wf.Status != workflow.StatusAwaitingApproval || p == nil || p.Kind != workflow.ApprovalIntent || p.Parameters["text"] != "alpha" || p.Step != 1 {
		t.Fatalf("after planning: %s %+v, want an intent pause at step 1 showing the planned alpha", wf.Status, p)
	}
	if _, err := e.Decide(ctx, "alice", wf.ID, p.ID, workflow.Decision{Approve: true,
		Constraints: map[string]any{"text": map[string]any{"enum": []any{"beta"}}}}); workflow.KindOf(err) != workflow.KindInvalid {
		t.Fatalf("constraints the plan breaks = %v, want invalid", err)
	}
	if _, err := e.Decide(ctx, "alice", wf.ID, p.ID, workflow.Decision{Approve: true,
		Constraints: map[string]any{"text": map[string]any{"enum": []any{"alpha"}}},
		Remember:    &workflow.Remember{Scope: workflow.ScopeWorkflow}}); err != nil {
		t.Fatal(err)
	}
	if wf = wait(t, e, wf.ID); wf.Status != workflow.StatusCompleted {
		t.Fatalf("ended %s (%+v), want completed: step 2 is within the standing constraints", wf.Status, wf.PendingApproval)
	}
	if calls := reg.Calls(); len(calls) != 2 {
		t.Errorf("executions = %+v, want both alphas", calls)
	}
	msgs := messages(t, store, wf.ID)
	if msgs[1].ApprovedBy != nil || msgs[2].ApprovedBy == nil || msgs[2].ApprovedBy.GrantedBy != "alice" {
		t.Errorf("approvedBy = %+v then %+v; want none on the decided step, alice's standing approval on the next", msgs[1].ApprovedBy, msgs[2].ApprovedBy)
	}
}
