package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/twostep/twostep/workflow"
)

func testInvalidInput(t *testing.T, f Fixture) {
	ctx := context.Background()
	existing, _, _ := create(t, f.Store, newWorkflow("alice"))
	s := f.Store
	noID := newWorkflow("alice")
	noID.ID = ""
	noUser := newWorkflow("")
	docNoName := document("", []byte("x"))
	docNoID := document("noid.txt", []byte("x"))
	docNoID.ID = ""
	msgNoID := userMessage("x")
	msgNoID.ID = ""

	tests := []struct {
		name string
		call func() error
	}{
		{"Commit without workflow", func() error { _, _, err := s.Commit(ctx, workflow.Commit{}); return err }},
		{"Commit without workflow id", func() error { _, _, err := s.Commit(ctx, workflow.Commit{Workflow: noID}); return err }},
		{"Commit without user id", func() error { _, _, err := s.Commit(ctx, workflow.Commit{Workflow: noUser}); return err }},
		{"Commit with negative version", func() error {
			_, _, err := s.Commit(ctx, workflow.Commit{Workflow: newWorkflow("alice"), ExpectedVersion: -1})
			return err
		}},
		{"Commit with message without id", func() error {
			_, _, err := s.Commit(ctx, workflow.Commit{Workflow: newWorkflow("alice"), Messages: []workflow.Message{msgNoID}})
			return err
		}},
		{"Commit with document without name", func() error {
			_, _, err := s.Commit(ctx, workflow.Commit{Workflow: newWorkflow("alice"), Documents: []workflow.DocumentContent{docNoName}})
			return err
		}},
		{"Commit with document without id", func() error {
			_, _, err := s.Commit(ctx, workflow.Commit{Workflow: newWorkflow("alice"), Documents: []workflow.DocumentContent{docNoID}})
			return err
		}},
		{"Commit with trace without id", func() error {
			wf := newWorkflow("alice")
			_, _, err := s.Commit(ctx, workflow.Commit{Workflow: wf, Traces: []workflow.Trace{{WorkflowID: wf.ID}}})
			return err
		}},
		{"Commit with another workflow's trace", func() error {
			_, _, err := s.Commit(ctx, workflow.Commit{Workflow: newWorkflow("alice"), Traces: []workflow.Trace{newTrace(existing.ID, 1)}})
			return err
		}},
		{"Commit with a trace twice", func() error {
			wf := newWorkflow("alice")
			tr := newTrace(wf.ID, 1)
			_, _, err := s.Commit(ctx, workflow.Commit{Workflow: wf, Traces: []workflow.Trace{tr, tr}})
			return err
		}},
		{"GetWorkflow empty id", func() error { _, err := s.GetWorkflow(ctx, ""); return err }},
		{"ListWorkflows empty user", func() error { _, _, err := s.ListWorkflows(ctx, "", workflow.Page{}); return err }},
		{"RunningFor empty user", func() error { _, err := f.RunningFor(ctx, ""); return err }},
		{"ListWorkflows malformed cursor", func() error {
			_, _, err := s.ListWorkflows(ctx, "alice", workflow.Page{Cursor: "not a cursor!"})
			return err
		}},
		{"ListWorkflows foreign cursor", func() error {
			_, _, err := s.ListWorkflows(ctx, "alice", workflow.Page{Cursor: "d2ZfMTIz"})
			return err
		}},
		{"ListAll malformed cursor", func() error { _, _, err := s.ListAll(ctx, workflow.Page{Cursor: "not a cursor!"}); return err }},
		{"DeleteWorkflow empty id", func() error { return s.DeleteWorkflow(ctx, "") }},
		{"Messages empty id", func() error { _, err := s.Messages(ctx, "", 0, 0); return err }},
		{"DocumentContent empty workflow", func() error { _, err := s.DocumentContent(ctx, "", "doc_x"); return err }},
		{"DocumentContent empty document", func() error { _, err := s.DocumentContent(ctx, existing.ID, ""); return err }},
		{"AppendTrace without id", func() error { return s.AppendTrace(ctx, workflow.Trace{WorkflowID: existing.ID}) }},
		{"AppendTrace without workflow", func() error { return s.AppendTrace(ctx, workflow.Trace{ID: workflow.NewID(workflow.PrefixTrace)}) }},
		{"Traces empty id", func() error { _, err := s.Traces(ctx, ""); return err }},
		{"GetTrace empty id", func() error { _, err := s.GetTrace(ctx, ""); return err }},
		{"ClaimRound without owner", func() error { _, err := s.ClaimRound(ctx, existing.ID, "", time.Second); return err }},
		{"ClaimRound without ttl", func() error { _, err := s.ClaimRound(ctx, existing.ID, "a", 0); return err }},
		{"ReleaseRound without owner", func() error { return s.ReleaseRound(ctx, existing.ID, "") }},
	}
	for _, tc := range tests {
		wantKind(t, tc.name, tc.call(), workflow.KindInvalid)
	}
	list, _, err := s.ListWorkflows(ctx, "alice", workflow.Page{})
	must(t, "ListWorkflows", err)
	if len(list) != 1 {
		t.Errorf("after rejected commits alice lists %d workflows, want 1", len(list))
	}
}

func testUnknownIDs(t *testing.T, f Fixture) {
	ctx := context.Background()
	existing, _, _ := create(t, f.Store, newWorkflow("alice"))
	s := f.Store
	unknown := workflow.NewID(workflow.PrefixWorkflow)
	tests := []struct {
		name string
		call func() error
	}{
		{"GetWorkflow", func() error { _, err := s.GetWorkflow(ctx, unknown); return err }},
		{"DeleteWorkflow", func() error { return s.DeleteWorkflow(ctx, unknown) }},
		{"Messages", func() error { _, err := s.Messages(ctx, unknown, 0, 0); return err }},
		{"DocumentContent of unknown workflow", func() error { _, err := s.DocumentContent(ctx, unknown, "doc_x"); return err }},
		{"DocumentContent of unknown document", func() error {
			_, err := s.DocumentContent(ctx, existing.ID, workflow.NewID(workflow.PrefixDocument))
			return err
		}},
		{"AppendTrace to unknown workflow", func() error {
			return s.AppendTrace(ctx, workflow.Trace{ID: workflow.NewID(workflow.PrefixTrace), WorkflowID: unknown})
		}},
		{"Traces", func() error { _, err := s.Traces(ctx, unknown); return err }},
		{"GetTrace", func() error { _, err := s.GetTrace(ctx, workflow.NewID(workflow.PrefixTrace)); return err }},
		{"ClaimRound", func() error { _, err := s.ClaimRound(ctx, unknown, "a", time.Second); return err }},
	}
	for _, tc := range tests {
		wantKind(t, tc.name, tc.call(), workflow.KindNotFound)
	}
	must(t, "ReleaseRound of unknown workflow is a no-op", s.ReleaseRound(ctx, unknown, "a"))
	list, next, err := s.ListWorkflows(ctx, "nobody", workflow.Page{})
	must(t, "ListWorkflows(nobody)", err)
	if len(list) != 0 || next != "" {
		t.Errorf("ListWorkflows(nobody) = %d workflows, cursor %q; want none", len(list), next)
	}
}

func testMessages(t *testing.T, f Fixture) {
	ctx := context.Background()
	wf, first, _ := create(t, f.Store, newWorkflow("alice"))
	want := []workflow.Message{first}
	for _, label := range []string{"a", "b", "c", "d"} {
		var m workflow.Message
		wf, m = step(t, f.Store, wf, label)
		want = append(want, m)
	}
	for i, m := range want {
		if m.Seq != int64(i+1) {
			t.Fatalf("message %d has seq %d, want %d", i, m.Seq, i+1)
		}
	}
	tests := []struct {
		after    int64
		limit    int
		wantSeqs []int64
	}{
		{0, 0, []int64{1, 2, 3, 4, 5}},
		{0, 2, []int64{1, 2}},
		{2, 0, []int64{3, 4, 5}},
		{2, 2, []int64{3, 4}},
		{4, 10, []int64{5}},
		{5, 0, nil},
		{9, 0, nil},
		{-3, 1, []int64{1}},
	}
	for _, tc := range tests {
		got, err := f.Store.Messages(ctx, wf.ID, tc.after, tc.limit)
		must(t, "Messages", err)
		var seqs []int64
		for _, m := range got {
			seqs = append(seqs, m.Seq)
			if w := want[m.Seq-1]; m.ID != w.ID || m.Text != w.Text || m.WorkflowID != wf.ID {
				t.Errorf("Messages(after %d): seq %d is %s %q, want %s %q", tc.after, m.Seq, m.ID, m.Text, w.ID, w.Text)
			}
		}
		if !slices.Equal(seqs, tc.wantSeqs) {
			t.Errorf("Messages(after %d, limit %d) seqs = %v, want %v", tc.after, tc.limit, seqs, tc.wantSeqs)
		}
	}
}
