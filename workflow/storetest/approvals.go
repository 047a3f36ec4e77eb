package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/twostep/twostep/workflow"
)

// pausedAt returns wf's next state: awaiting approval of an approval
// that expires at expires.
func pausedAt(wf *workflow.Workflow, expires time.Time) *workflow.Workflow {
	next := wf.Clone()
	next.Status = workflow.StatusAwaitingApproval
	next.PendingApproval = &workflow.PendingApproval{
		ID: workflow.NewID(workflow.PrefixApproval), Action: "ai.process", Round: next.Round, Step: next.Step + 1,
		Parameters: map[string]any{"x": "y"}, Effect: workflow.EffectWrite,
		RequestedAt: expires.Add(-time.Hour), ExpiresAt: expires,
	}
	return next
}

// testApprovalIndex follows the approval index (workflow.ApprovalIndex)
// through pauses, a decision, a commit that lost its version race, a new
// approval of the same workflow, a delete and a backfill, for users whose
// ids could break a key layout.
func testApprovalIndex(t *testing.T, f Fixture) {
	ctx := context.Background()
	index, ok := f.Store.(workflow.ApprovalIndex)
	if !ok {
		t.Fatalf("%T is not a workflow.ApprovalIndex", f.Store)
	}
	t0 := time.Now().UTC().Truncate(time.Second).Add(time.Hour)
	commit := func(what string, wf *workflow.Workflow, expected int64) *workflow.Workflow {
		t.Helper()
		got, _, err := f.Store.Commit(ctx, workflow.Commit{Workflow: wf, ExpectedVersion: expected})
		must(t, what, err)
		return got
	}
	pause := func(wf *workflow.Workflow, expires time.Time) *workflow.Workflow {
		t.Helper()
		return commit("Commit(pause "+wf.ID+")", pausedAt(wf, expires), wf.Version)
	}
	due := func(when string, now time.Time, limit int, want ...*workflow.Workflow) {
		t.Helper()
		got, _, err := index.DueApprovals(ctx, now, workflow.DueCursor{}, limit)
		must(t, "DueApprovals", err)
		ids := make([]string, len(want))
		for i, w := range want {
			ids[i] = w.ID
		}
		if diff := cmp.Diff(ids, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: DueApprovals(t0%+v, %d) (-want +got):\n%s", when, now.Sub(t0), limit, diff)
		}
	}

	a, _, _ := create(t, f.Store, newWorkflow("alice"))
	b, _, _ := create(t, f.Store, newWorkflow("bob"))
	c, _, _ := create(t, f.Store, newWorkflow(oddUser))
	d, _, _ := create(t, f.Store, newWorkflow(oddUserEscaped))
	due("nothing paused", t0.Add(time.Hour), 10)

	b = pause(b, t0.Add(2*time.Minute))
	a = pause(a, t0.Add(time.Minute))
	c = pause(c, t0.Add(3*time.Minute))
	due("before the first expiry", t0.Add(time.Minute-time.Millisecond), 10)
	due("at the first expiry", t0.Add(time.Minute), 10, a)
	due("limited", t0.Add(time.Hour), 2, a, b)
	due("all due, earliest first", t0.Add(time.Hour), 10, a, b, c)

	// A decision moves a on: it leaves the index.
	decided := a.Clone()
	decided.Status, decided.PendingApproval = workflow.StatusRunning, nil
	commit("Commit(decide a)", decided, a.Version)
	due("after a decision", t0.Add(time.Hour), 10, b, c)

	// A pause that lost its version race is not in the index.
	_, _, err := f.Store.Commit(ctx, workflow.Commit{Workflow: pausedAt(d, t0), ExpectedVersion: d.Version + 5})
	wantKind(t, "stale pause", err, workflow.KindConflict)
	due("after a stale pause", t0.Add(time.Hour), 10, b, c)

	// A new approval of b moves its entry to the new expiry.
	resumed := b.Clone()
	resumed.Status, resumed.PendingApproval = workflow.StatusRunning, nil
	b = pause(commit("Commit(resume b)", resumed, b.Version), t0.Add(20*time.Minute))
	due("after b's new approval", t0.Add(10*time.Minute), 10, c)
	due("both due again", t0.Add(time.Hour), 10, c, b)

	// A deleted workflow leaves the index, and nothing of it is left.
	must(t, "DeleteWorkflow(c)", f.Store.DeleteWorkflow(ctx, c.ID))
	due("after a delete", t0.Add(time.Hour), 10, b)
	if f.KeysLeft != nil {
		if n := f.KeysLeft(t, c.ID); n != 0 {
			t.Errorf("%d keys or index entries of the deleted workflow left, want 0", n)
		}
	}

	// Every commit indexed its workflow: a backfill adds nothing.
	n, err := index.BackfillApprovals(ctx)
	must(t, "BackfillApprovals", err)
	if n != 0 {
		t.Errorf("BackfillApprovals added %d entries to an index its commits kept, want 0", n)
	}
	due("after a backfill", t0.Add(time.Hour), 10, b)

	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := index.DueApprovals(done, t0, workflow.DueCursor{}, 10); err == nil {
		t.Error("DueApprovals(cancelled ctx) succeeded, want the context's error")
	}

	// Paging: every entry due is read once, in order, whatever the page
	// size, across entries sharing one expiresAt (the same millisecond),
	// across a decided entry, and not past now.
	var paused []*workflow.Workflow
	for i := range 7 {
		w, _, _ := create(t, f.Store, newWorkflow([]string{"alice", "bob", oddUser}[i%3]))
		expires := t0.Add(2 * time.Hour)
		if i >= 5 {
			expires = expires.Add(time.Duration(i) * time.Minute)
		}
		paused = append(paused, pause(w, expires))
	}
	moved := paused[2].Clone()
	moved.Status, moved.PendingApproval = workflow.StatusRunning, nil
	commit("Commit(decide a paged one)", moved, paused[2].Version)
	var want []string
	for i, w := range paused {
		if i != 2 && i != 6 {
			want = append(want, w.ID)
		}
	}
	slices.Sort(want[:4]) // the same expiresAt: ordered by id
	now := t0.Add(2*time.Hour + 5*time.Minute + time.Second)
	for _, size := range []int{1, 2, 3, 10} {
		var got []string
		var after workflow.DueCursor
		for calls := 0; ; calls++ {
			if calls > len(paused)+2 {
				t.Fatalf("page size %d: paging does not end", size)
			}
			ids, next, err := index.DueApprovals(ctx, now, after, size)
			must(t, "DueApprovals(paged)", err)
			if len(ids) > size {
				t.Errorf("page size %d: a page of %d ids", size, len(ids))
			}
			for _, id := range ids {
				if id != b.ID {
					got = append(got, id)
				}
			}
			if next.IsZero() {
				break
			}
			after = next
		}
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("paging by %d (-want +got):\n%s", size, diff)
		}
	}
}
