package storetest

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/twostep/twostep/workflow"
)

// testCommitTraces: the traces a commit carries are stored with it, after
// the workflow's earlier traces and in order; a commit the store refuses
// (a stale version, a trace id already stored) stores none of them and
// nothing else either.
func testCommitTraces(t *testing.T, f Fixture) {
	ctx := context.Background()
	wf, _, _ := create(t, f.Store, newWorkflow("alice"))
	first := newTrace(wf.ID, 0)
	must(t, "AppendTrace", f.Store.AppendTrace(ctx, first))
	want := []workflow.Trace{first, newTrace(wf.ID, 1), newTrace(wf.ID, 2)}
	next := wf.Clone()
	next.Step++
	m := userMessage("with traces")
	stored, msgs, err := f.Store.Commit(ctx, workflow.Commit{
		Workflow: next, ExpectedVersion: wf.Version, Messages: []workflow.Message{m}, Traces: want[1:],
	})
	must(t, "Commit with traces", err)
	if len(msgs) != 1 || msgs[0].Seq != 2 || stored.Version != wf.Version+1 {
		t.Errorf("Commit with traces: version %d, messages %+v; want version %d and seq 2", stored.Version, msgs, wf.Version+1)
	}
	got, err := f.Store.Traces(ctx, wf.ID)
	must(t, "Traces", err)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Traces after the commit (-want +got):\n%s", diff)
	}
	one, err := f.Store.GetTrace(ctx, want[2].ID)
	must(t, "GetTrace of a committed trace", err)
	if diff := cmp.Diff(want[2], one); diff != "" {
		t.Errorf("GetTrace (-want +got):\n%s", diff)
	}

	stale := newTrace(wf.ID, 3)
	_, _, err = f.Store.Commit(ctx, workflow.Commit{Workflow: next, ExpectedVersion: wf.Version, Traces: []workflow.Trace{stale}})
	wantKind(t, "stale commit with a trace", err, workflow.KindConflict)
	_, err = f.Store.GetTrace(ctx, stale.ID)
	wantKind(t, "GetTrace of a refused commit's trace", err, workflow.KindNotFound)

	again := stored.Clone()
	again.Step++
	fresh := newTrace(wf.ID, 4)
	_, _, err = f.Store.Commit(ctx, workflow.Commit{
		Workflow: again, ExpectedVersion: stored.Version, Messages: []workflow.Message{userMessage("never stored")},
		Traces: []workflow.Trace{fresh, want[1]},
	})
	wantKind(t, "commit of a stored trace id", err, workflow.KindConflict)
	cur, err := f.Store.GetWorkflow(ctx, wf.ID)
	must(t, "GetWorkflow", err)
	if cur.Version != stored.Version {
		t.Errorf("a commit refused for its trace id wrote version %d, want %d kept", cur.Version, stored.Version)
	}
	all, err := f.Store.Messages(ctx, wf.ID, 0, 0)
	must(t, "Messages", err)
	if len(all) != 2 {
		t.Errorf("a commit refused for its trace id left %d messages, want 2", len(all))
	}
	got, err = f.Store.Traces(ctx, wf.ID)
	must(t, "Traces", err)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Traces after refused commits (-want +got):\n%s", diff)
	}
	_, err = f.Store.GetTrace(ctx, fresh.ID)
	wantKind(t, "GetTrace of a trace refused with its commit", err, workflow.KindNotFound)
}

// testCommitTraceCap: a commit's traces count against the trace cap as
// appended ones do, the oldest dropped first (from GetTrace too), and a
// deleted workflow leaves no entry of any of them behind.
func testCommitTraceCap(t *testing.T, f Fixture) {
	ctx := context.Background()
	wf, _, _ := create(t, f.Store, newWorkflow("alice"))
	var traces []workflow.Trace
	for i := range f.TraceCap + 2 {
		traces = append(traces, newTrace(wf.ID, i))
	}
	next := wf.Clone()
	next.Step++
	stored, _, err := f.Store.Commit(ctx, workflow.Commit{Workflow: next, ExpectedVersion: wf.Version, Traces: traces})
	must(t, "Commit past the cap", err)
	last := newTrace(wf.ID, len(traces))
	traces = append(traces, last)
	next = stored.Clone()
	next.Step++
	_, _, err = f.Store.Commit(ctx, workflow.Commit{Workflow: next, ExpectedVersion: stored.Version, Traces: []workflow.Trace{last}})
	must(t, "Commit at the cap", err)
	got, err := f.Store.Traces(ctx, wf.ID)
	must(t, "Traces", err)
	if diff := cmp.Diff(traces[3:], got); diff != "" {
		t.Errorf("kept traces, want the newest %d (-want +got):\n%s", f.TraceCap, diff)
	}
	for _, dropped := range traces[:3] {
		_, err = f.Store.GetTrace(ctx, dropped.ID)
		wantKind(t, "GetTrace of a dropped trace", err, workflow.KindNotFound)
	}
	must(t, "DeleteWorkflow", f.Store.DeleteWorkflow(ctx, wf.ID))
	if f.KeysLeft != nil {
		if n := f.KeysLeft(t, wf.ID); n != 0 {
			t.Errorf("%d keys or entries left after deleting a workflow with committed traces", n)
		}
	}
}
