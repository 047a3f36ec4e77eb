package storetest

import (
	"bytes"
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/twostep/twostep/workflow"
)

// testEmptyDocuments commits empty documents — an upload with nil content,
// one with zero-length content, an action's empty output in a later step —
// beside a non-empty one, and reads each back byte-identically: size 0 and
// zero-length, non-nil content (on Redis: an empty hash field value is an
// empty document, not a missing one).
func testEmptyDocuments(t *testing.T, f Fixture) {
	ctx := context.Background()
	wf := newWorkflow("alice")
	docs := []workflow.DocumentContent{
		document("empty.txt", nil),
		document("blank.md", []byte{}),
		document("notes.txt", []byte("not empty")),
	}
	user := userMessage("three uploads", docs...)
	stored, saved, err := f.Store.Commit(ctx, workflow.Commit{Workflow: wf, Messages: []workflow.Message{user}, Documents: docs})
	must(t, "Commit(create with empty documents)", err)
	if got := saved[0].Documents; len(got) != 3 || got[0].Size != 0 || got[1].Size != 0 || got[2].Size != 9 {
		t.Errorf("user message documents = %+v, want sizes 0, 0, 9", got)
	}

	output := document("result.csv", nil)
	next := stored.Clone()
	next.Step++
	action := workflow.Message{
		ID: workflow.NewID(workflow.PrefixMessage), Round: 1, Step: next.Step, Role: workflow.RoleAction,
		Action: "ai.process", Status: workflow.MessageSuccess, DocumentsLabel: "round1_step1_ai_process",
	}
	output.MessageID = action.ID
	action.Documents = []workflow.Document{output.Document}
	_, _, err = f.Store.Commit(ctx, workflow.Commit{
		Workflow: next, ExpectedVersion: stored.Version, Messages: []workflow.Message{action},
		Documents: []workflow.DocumentContent{output},
	})
	must(t, "Commit(step with an empty output)", err)

	for _, d := range append(docs, output) {
		got, err := f.Store.DocumentContent(ctx, wf.ID, d.ID)
		if err != nil {
			t.Errorf("DocumentContent(%s): %v", d.Name, err)
			continue
		}
		want := d.Document
		want.WorkflowID = wf.ID
		want.Size = int64(len(d.Content))
		if diff := cmp.Diff(want, got.Document); diff != "" {
			t.Errorf("%s metadata (-want +got):\n%s", d.Name, diff)
		}
		if got.Content == nil || !bytes.Equal(got.Content, d.Content) {
			t.Errorf("%s content = %q (nil: %t), want %q and never nil", d.Name, got.Content, got.Content == nil, d.Content)
		}
	}
	msgs, err := f.Store.Messages(ctx, wf.ID, 0, 0)
	must(t, "Messages", err)
	if len(msgs) != 2 || len(msgs[1].Documents) != 1 || msgs[1].Documents[0].ID != output.ID || msgs[1].Documents[0].Size != 0 {
		t.Errorf("messages = %+v, want the action message listing its empty output", msgs)
	}
}

// testDropDocuments: a commit's DropDocuments deletes those documents of
// the workflow with the change, ignoring an id the workflow does not hold;
// a refused commit deletes nothing.
func testDropDocuments(t *testing.T, f Fixture) {
	ctx := context.Background()
	keep, drop := document("keep.txt", []byte("kept")), document("queued.txt", []byte("uploaded for a queued round"))
	user := userMessage("one upload", keep)
	stored, _, err := f.Store.Commit(ctx, workflow.Commit{Workflow: newWorkflow("dropper"), Messages: []workflow.Message{user},
		Documents: []workflow.DocumentContent{keep}})
	must(t, "Commit(create)", err)
	next := stored.Clone()
	next.QueueEdits++
	stored, _, err = f.Store.Commit(ctx, workflow.Commit{Workflow: next, ExpectedVersion: stored.Version, Documents: []workflow.DocumentContent{drop}})
	must(t, "Commit(queue with an upload)", err)

	stale := stored.Clone()
	_, _, err = f.Store.Commit(ctx, workflow.Commit{Workflow: stale, ExpectedVersion: stored.Version - 1, DropDocuments: []string{drop.ID}})
	wantKind(t, "Commit(stale, dropping)", err, workflow.KindConflict)
	if _, err := f.Store.DocumentContent(ctx, stored.ID, drop.ID); err != nil {
		t.Fatalf("a refused commit deleted the document: %v", err)
	}
	stopped := stored.Clone()
	stopped.Status = workflow.StatusStopped
	_, _, err = f.Store.Commit(ctx, workflow.Commit{Workflow: stopped, ExpectedVersion: stored.Version,
		DropDocuments: []string{drop.ID, workflow.NewID(workflow.PrefixDocument)}})
	must(t, "Commit(stop, dropping)", err)
	if _, err := f.Store.DocumentContent(ctx, stored.ID, drop.ID); workflow.KindOf(err) != workflow.KindNotFound {
		t.Errorf("DocumentContent(dropped) = %v, want not found", err)
	}
	if got, err := f.Store.DocumentContent(ctx, stored.ID, keep.ID); err != nil || string(got.Content) != "kept" {
		t.Errorf("DocumentContent(kept) = %q, %v; want it whole", got.Content, err)
	}
}
