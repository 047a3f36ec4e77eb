package storetest

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/twostep/twostep/workflow"
)

// Users whose ids could break a key layout that embeds them: braces (a
// Redis hash tag), a colon (a key separator), a glob star, and the
// query-escaped spelling of the first, which must still be another user.
const (
	oddUser        = "team:{ops}*"
	oddUserEscaped = "team%3A%7Bops%7D%2A"
)

// testRunningFor follows the per-user running index through creation,
// a completed round, a stale commit, a new round and a delete, for users
// whose workflows must never show up in each other's answer.
func testRunningFor(t *testing.T, f Fixture) {
	ctx := context.Background()
	runningFor := func(user string) []string {
		t.Helper()
		ids, err := f.RunningFor(ctx, user)
		must(t, "RunningFor("+user+")", err)
		slices.Sort(ids)
		return ids
	}
	want := func(when string, wants map[string][]string) {
		t.Helper()
		all, err := f.Store.Running(ctx)
		must(t, "Running", err)
		for user, ids := range wants {
			ids = slices.Sorted(slices.Values(ids))
			got := runningFor(user)
			if diff := cmp.Diff(ids, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s: RunningFor(%q) (-want +got):\n%s", when, user, diff)
			}
			for _, id := range got {
				if !slices.Contains(all, id) {
					t.Errorf("%s: RunningFor(%q) returns %s, which Running does not", when, user, id)
				}
			}
		}
	}

	a1, _, _ := create(t, f.Store, newWorkflow("alice"))
	a2, _, _ := create(t, f.Store, newWorkflow("alice"))
	idle := newWorkflow("alice")
	idle.Status, idle.StopReason = workflow.StatusCompleted, workflow.StopCompleted
	create(t, f.Store, idle)
	b1, _, _ := create(t, f.Store, newWorkflow("bob"))
	o1, _, _ := create(t, f.Store, newWorkflow(oddUser))
	e1, _, _ := create(t, f.Store, newWorkflow(oddUserEscaped))
	want("after create", map[string][]string{
		"alice": {a1.ID, a2.ID}, "bob": {b1.ID}, "nobody": nil, "ali": nil,
		oddUser: {o1.ID}, oddUserEscaped: {e1.ID},
	})

	done := a1.Clone()
	done.Status, done.StopReason = workflow.StatusCompleted, workflow.StopCompleted
	done, _, err := f.Store.Commit(ctx, workflow.Commit{Workflow: done, ExpectedVersion: a1.Version})
	must(t, "Commit(completed)", err)
	want("after a1 completed", map[string][]string{"alice": {a2.ID}, "bob": {b1.ID}})

	_, _, err = f.Store.Commit(ctx, workflow.Commit{Workflow: a1.Clone(), ExpectedVersion: a1.Version})
	wantKind(t, "stale commit", err, workflow.KindConflict)
	want("after a stale running commit of a1", map[string][]string{"alice": {a2.ID}})

	again := done.Clone()
	again.Status, again.StopReason, again.Round = workflow.StatusRunning, "", 2
	again, _, err = f.Store.Commit(ctx, workflow.Commit{Workflow: again, ExpectedVersion: done.Version})
	must(t, "Commit(new round)", err)
	want("after a1 started round 2", map[string][]string{"alice": {a1.ID, a2.ID}, "bob": {b1.ID}})

	step(t, f.Store, again, "round 2, step 1")
	want("after a step of round 2", map[string][]string{"alice": {a1.ID, a2.ID}})

	must(t, "DeleteWorkflow(a2)", f.Store.DeleteWorkflow(ctx, a2.ID))
	must(t, "DeleteWorkflow(o1)", f.Store.DeleteWorkflow(ctx, o1.ID))
	want("after deletes", map[string][]string{
		"alice": {a1.ID}, "bob": {b1.ID}, oddUser: nil, oddUserEscaped: {e1.ID},
	})
	if f.KeysLeft != nil {
		for _, id := range []string{a2.ID, o1.ID} {
			if n := f.KeysLeft(t, id); n != 0 {
				t.Errorf("%d keys or index entries of the deleted running workflow %s left", n, id)
			}
		}
	}
}
