package react_test

import (
	"context"
	"testing"

	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/workflow"
)

// remoteNeedsApproval holds every Remote call for a decision, as a write.
type remoteNeedsApproval struct{}

func (remoteNeedsApproval) NeedsApproval(action string, _ map[string]any) (bool, workflow.Effect) {
	return action == enginetest.Remote, workflow.EffectWrite
}
func (remoteNeedsApproval) NeedsIntentApproval(string) bool                    { return false }
func (remoteNeedsApproval) ConstraintFragmentProblems(map[string]any) []string { return nil }
func (remoteNeedsApproval) ConstraintProblems(_, _ map[string]any) []string    { return nil }

// TestStandingApprovalIsBoundToItsConnection: a call approved through
// connection low and remembered for the user admits the same call through
// low later, but not through high (another credential): that one pauses
// for a decision of its own, and the remote was never called through high.
func TestStandingApprovalIsBoundToItsConnection(t *testing.T) {
	t.Parallel()
	store, reg := memstore.New(), enginetest.NewRegistry()
	reg.Conns["alice"] = []workflow.Connection{{Label: "high", Kind: "http", Description: "admin credential"},
		{Label: "low", Kind: "http", Description: "read-mostly credential"}}
	remote := func(conn string) []string {
		return []string{enginetest.Select(enginetest.Remote, "post through "+conn, nil, conn)}
	}
	model := scripted.New(replies(remote("low"), enginetest.Completes("one"),
		remote("low"), enginetest.Completes("two"),
		remote("high"))...)
	cfg := testConfig("a")
	cfg.Approvals = remoteNeedsApproval{}
	e := startEngine(t, cfg, store, model, reg)
	ctx := context.Background()
	first := wait(t, e, create(t, e, "first", 5).ID)
	if p := first.PendingApproval; p == nil || p.Connection != "low" {
		t.Fatalf("first workflow = %s, pending %+v; want a pause for the call through low", first.Status, p)
	}
	if _, err := e.Decide(ctx, "alice", first.ID, first.PendingApproval.ID, workflow.Decision{Approve: true,
		Remember: &workflow.Remember{Scope: workflow.ScopeUser}}); err != nil {
		t.Fatal(err)
	}
	wait(t, e, first.ID)
	if second := wait(t, e, create(t, e, "second", 5).ID); second.Status != workflow.StatusCompleted {
		t.Fatalf("second workflow = %s (%+v), want the same call through low admitted", second.Status, second.PendingApproval)
	}
	third := wait(t, e, create(t, e, "third", 5).ID)
	if p := third.PendingApproval; third.Status != workflow.StatusAwaitingApproval || p == nil || p.Connection != "high" {
		t.Fatalf("third workflow = %s, pending %+v; want a pause for the call through high", third.Status, p)
	}
	for _, c := range reg.Calls() {
		if c.Connection != nil && c.Connection.Label == "high" {
			t.Errorf("the remote was called through high without a decision: %+v", c)
		}
	}
	list, err := e.Standing(ctx, "alice")
	if err != nil || len(list) != 1 || list[0].Connection != "low" || list[0].Uses != 1 {
		t.Errorf("standing = %+v, %v; want one bound to low, used once", list, err)
	}
}
