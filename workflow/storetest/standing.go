package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/twostep/twostep/workflow"
)

// standingOf returns f's store as a workflow.StandingStore.
func standingOf(t *testing.T, f Fixture) workflow.StandingStore {
	t.Helper()
	ss, ok := f.Store.(workflow.StandingStore)
	if !ok {
		t.Fatalf("%T is not a workflow.StandingStore", f.Store)
	}
	return ss
}

// testStandingApprovals stores, lists, uses, expires and revokes standing
// approvals of users whose ids could break a key layout: each user sees
// only their own, an expired one is neither listed nor kept, a revoked one
// cannot be used, and another user's id is not found.
func testStandingApprovals(t *testing.T, f Fixture) {
	ctx := context.Background()
	ss := standingOf(t, f)
	now := time.Now().UTC().Truncate(time.Millisecond)
	later := now.Add(time.Hour)
	alice, bob := "alice:{x}*", "bob"
	intent := workflow.StandingApproval{
		ID: workflow.NewID(workflow.PrefixStanding), UserID: alice, Action: "tickets.create", Kind: workflow.ApprovalIntent,
		Scope: workflow.ScopeWorkflow, WorkflowID: "wf_1", Constraints: map[string]any{"priority": map[string]any{"maximum": 2.0}},
		GrantedBy: alice, GrantedAt: now, ExpiresAt: &later, Uses: 9,
	}
	call := workflow.StandingApproval{
		ID: workflow.NewID(workflow.PrefixStanding), UserID: alice, Action: "mail.send", Kind: workflow.ApprovalCall,
		Scope: workflow.ScopeUser, Parameters: map[string]any{"to": "a@b", "n": 2.0}, GrantedBy: alice, GrantedAt: now.Add(time.Second),
	}
	soon := now.Add(time.Minute)
	short := workflow.StandingApproval{
		ID: workflow.NewID(workflow.PrefixStanding), UserID: alice, Action: "x", Kind: workflow.ApprovalCall, Scope: workflow.ScopeUser,
		Parameters: map[string]any{}, GrantedBy: alice, GrantedAt: now.Add(2 * time.Second), ExpiresAt: &soon,
	}
	theirs := workflow.StandingApproval{
		ID: workflow.NewID(workflow.PrefixStanding), UserID: bob, Action: "mail.send", Kind: workflow.ApprovalCall,
		Scope: workflow.ScopeUser, Parameters: map[string]any{}, GrantedBy: bob, GrantedAt: now,
	}
	for _, a := range []workflow.StandingApproval{intent, call, short, theirs} {
		must(t, "PutStanding "+a.ID, ss.PutStanding(ctx, a))
	}
	n, err := ss.UseStanding(ctx, alice, intent.ID)
	must(t, "UseStanding", err)
	if n != 1 {
		t.Errorf("first use counted %d, want 1 (a new standing approval has no use)", n)
	}
	wantKind(t, "UseStanding of another user's", func() error { _, err := ss.UseStanding(ctx, bob, intent.ID); return err }(), workflow.KindNotFound)

	got, err := ss.ListStanding(ctx, alice, now.Add(2*time.Minute)) // short has expired
	must(t, "ListStanding", err)
	intent.Uses = 1
	call.Uses = 0
	if diff := cmp.Diff([]workflow.StandingApproval{intent, call}, got); diff != "" {
		t.Errorf("ListStanding(alice) (-want +got):\n%s", diff)
	}
	if again, _ := ss.ListStanding(ctx, alice, now); len(again) != 2 {
		t.Errorf("after expiry, ListStanding at an earlier time lists %d, want 2: an expired one is dropped for good", len(again))
	}
	wantKind(t, "DeleteStanding of another user's", ss.DeleteStanding(ctx, bob, intent.ID), workflow.KindNotFound)
	must(t, "DeleteStanding", ss.DeleteStanding(ctx, alice, intent.ID))
	wantKind(t, "DeleteStanding twice", ss.DeleteStanding(ctx, alice, intent.ID), workflow.KindNotFound)
	wantKind(t, "UseStanding after revocation", func() error { _, err := ss.UseStanding(ctx, alice, intent.ID); return err }(), workflow.KindNotFound)
	got, err = ss.ListStanding(ctx, alice, now)
	must(t, "ListStanding after revocation", err)
	if len(got) != 1 || got[0].ID != call.ID {
		t.Errorf("after revocation ListStanding(alice) = %+v, want only %s", got, call.ID)
	}
	if got, _ := ss.ListStanding(ctx, bob, now); len(got) != 1 || got[0].ID != theirs.ID {
		t.Errorf("ListStanding(bob) = %+v, want only %s", got, theirs.ID)
	}
	if got, _ := ss.ListStanding(ctx, "nobody", now); len(got) != 0 {
		t.Errorf("ListStanding(nobody) = %+v, want none", got)
	}
}

// testStandingUsesConcurrent uses one standing approval from many
// goroutines at once: every use is counted, each count handed out once.
func testStandingUsesConcurrent(t *testing.T, f Fixture) {
	ctx := context.Background()
	ss := standingOf(t, f)
	a := workflow.StandingApproval{
		ID: workflow.NewID(workflow.PrefixStanding), UserID: "carol", Action: "a", Kind: workflow.ApprovalIntent,
		Scope: workflow.ScopeUser, Constraints: map[string]any{}, GrantedBy: "carol", GrantedAt: time.Now().UTC(),
	}
	must(t, "PutStanding", ss.PutStanding(ctx, a))
	const n = 20
	counts := make(chan int64, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			c, err := ss.UseStanding(ctx, "carol", a.ID)
			if err != nil {
				t.Errorf("UseStanding: %v", err)
			}
			counts <- c
		})
	}
	wg.Wait()
	close(counts)
	seen := map[int64]bool{}
	for c := range counts {
		seen[c] = true
	}
	if len(seen) != n {
		t.Errorf("%d concurrent uses handed out %d distinct counts, want %d", n, len(seen), n)
	}
	got, err := ss.ListStanding(ctx, "carol", time.Now())
	must(t, "ListStanding", err)
	if len(got) != 1 || got[0].Uses != n {
		t.Errorf("uses = %+v, want one approval with %d uses", got, n)
	}
}
