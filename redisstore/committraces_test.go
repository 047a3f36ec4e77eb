package redisstore_test

import (
	"context"
	"testing"

	"github.com/twostep/twostep/redisstore"
	"github.com/twostep/twostep/workflow"
)

// A commit refused because its second trace's id is stored already leaves
// no data of its first trace in the workflow's trace hash (the script
// writes each trace's data as it checks its id, and takes back what it
// wrote), keeps the stored trace's data as it was, and adds no messages;
// the commit after it numbers its messages on from the stored ones.
func TestRefusedCommitLeavesNoTraceData(t *testing.T) {
	t.Parallel()
	mr, s := newMini(t, redisstore.Options{KeyPrefix: "ct"})
	ctx := context.Background()
	st := newStepper(t, s)
	if err := st.step(ctx); err != nil { // one stored message to number on from
		t.Fatal(err)
	}
	before, err := s.Messages(ctx, st.cur.ID, 0, 0)
	if err != nil || len(before) != 1 {
		t.Fatalf("messages before: %d, %v; want 1", len(before), err)
	}
	old := workflow.Trace{ID: workflow.NewID(workflow.PrefixTrace), WorkflowID: st.cur.ID, Response: "the stored one"}
	if err := s.AppendTrace(ctx, old); err != nil {
		t.Fatal(err)
	}
	data := "ct:{u:bench}:wf:" + st.cur.ID + ":tracedata"
	stored := mr.HGet(data, old.ID)
	if stored == "" {
		t.Fatalf("no data under %s for the appended trace; the layout changed?", data)
	}
	fresh := workflow.Trace{ID: workflow.NewID(workflow.PrefixTrace), WorkflowID: st.cur.ID, Response: "never stored"}
	next := st.cur.Clone()
	next.Step++
	dup := old
	dup.Response = "a second trace with the stored id"
	_, _, err = s.Commit(ctx, workflow.Commit{
		Workflow: next, ExpectedVersion: st.cur.Version, Traces: []workflow.Trace{fresh, dup},
		Messages: []workflow.Message{{ID: workflow.NewID(workflow.PrefixMessage), Role: workflow.RoleUser, Text: "never stored"}},
	})
	if workflow.KindOf(err) != workflow.KindConflict {
		t.Fatalf("commit with a stored trace id: %v, want a conflict", err)
	}
	if got, _ := mr.HKeys(data); len(got) != 1 || got[0] != old.ID {
		t.Errorf("trace data fields after the refused commit: %q, want only %s", got, old.ID)
	}
	if got := mr.HGet(data, old.ID); got != stored {
		t.Errorf("the stored trace's data changed:\n got %s\nwant %s", got, stored)
	}
	after, err := s.Messages(ctx, st.cur.ID, 0, 0)
	if err != nil || len(after) != len(before) {
		t.Errorf("messages after the refused commit: %d, %v; want %d", len(after), err, len(before))
	}
	_, msgs, err := s.Commit(ctx, workflow.Commit{
		Workflow: next, ExpectedVersion: st.cur.Version, Traces: []workflow.Trace{fresh},
		Messages: []workflow.Message{
			{ID: workflow.NewID(workflow.PrefixMessage), Role: workflow.RoleUser, Text: "one"},
			{ID: workflow.NewID(workflow.PrefixMessage), Role: workflow.RoleUser, Text: "two"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := int64(len(before)); len(msgs) != 2 || msgs[0].Seq != n+1 || msgs[1].Seq != n+2 {
		t.Errorf("messages after %d stored ones: %+v, want seqs %d and %d", n, msgs, n+1, n+2)
	}
}
