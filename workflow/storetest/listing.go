package storetest

import (
	"context"
	"testing"

	"github.com/twostep/twostep/workflow"
)

// testListing pages through one user's workflows: newest first, only that
// user's, no duplicate and no gap across pages.
func testListing(t *testing.T, f Fixture) {
	ctx := context.Background()
	var alice []string // creation order
	for i := range 7 {
		wf, _, _ := create(t, f.Store, newWorkflow("alice"))
		alice = append(alice, wf.ID)
		if i < 3 {
			create(t, f.Store, newWorkflow("bob"))
		}
	}
	// A later commit must not move a workflow in the listing.
	first, err := f.Store.GetWorkflow(ctx, alice[0])
	must(t, "GetWorkflow", err)
	step(t, f.Store, first, "touch")

	var got []string
	cursor := ""
	for page := 0; ; page++ {
		if page > 5 {
			t.Fatal("listing does not end")
		}
		list, next, err := f.Store.ListWorkflows(ctx, "alice", workflow.Page{Limit: 3, Cursor: cursor})
		must(t, "ListWorkflows", err)
		if len(list) > 3 {
			t.Errorf("page %d has %d workflows, limit 3", page, len(list))
		}
		for _, wf := range list {
			if wf.UserID != "alice" {
				t.Errorf("alice's listing shows %s of %q", wf.ID, wf.UserID)
			}
			got = append(got, wf.ID)
		}
		if next == "" {
			break
		}
		cursor = next
	}
	if len(got) != len(alice) {
		t.Fatalf("listing has %d workflows %v, want %d", len(got), got, len(alice))
	}
	for i, id := range got {
		if want := alice[len(alice)-1-i]; id != want {
			t.Errorf("listing[%d] = %s, want %s (newest first)", i, id, want)
		}
	}
	bob, next, err := f.Store.ListWorkflows(ctx, "bob", workflow.Page{})
	must(t, "ListWorkflows(bob)", err)
	if len(bob) != 3 || next != "" {
		t.Errorf("bob lists %d workflows (cursor %q), want 3 and no cursor", len(bob), next)
	}
}

// testListingCursor checks the page size rules and a cursor whose workflow
// was deleted in the meantime.
func testListingCursor(t *testing.T, f Fixture) {
	ctx := context.Background()
	var ids []string
	for range 60 {
		wf, _, _ := create(t, f.Store, newWorkflow("carol"))
		ids = append(ids, wf.ID)
	}
	tests := []struct {
		name      string
		limit     int
		wantLen   int
		wantMore  bool
		wantFirst string
	}{
		{"zero means 50", 0, 50, true, ids[59]},
		{"negative means 50", -4, 50, true, ids[59]},
		{"exact", 60, 60, false, ids[59]},
		{"over max is cut to 200", 1000, 60, false, ids[59]},
	}
	for _, tc := range tests {
		list, next, err := f.Store.ListWorkflows(ctx, "carol", workflow.Page{Limit: tc.limit})
		must(t, tc.name, err)
		if len(list) != tc.wantLen || (next != "") != tc.wantMore || list[0].ID != tc.wantFirst {
			t.Errorf("%s: %d workflows, cursor %q, first %s; want %d, more %v, first %s",
				tc.name, len(list), next, list[0].ID, tc.wantLen, tc.wantMore, tc.wantFirst)
		}
	}

	page1, next, err := f.Store.ListWorkflows(ctx, "carol", workflow.Page{Limit: 10})
	must(t, "ListWorkflows", err)
	must(t, "DeleteWorkflow(last of page 1)", f.Store.DeleteWorkflow(ctx, page1[9].ID))
	must(t, "DeleteWorkflow(first of page 2)", f.Store.DeleteWorkflow(ctx, ids[49]))
	page2, _, err := f.Store.ListWorkflows(ctx, "carol", workflow.Page{Limit: 10, Cursor: next})
	must(t, "ListWorkflows(page 2)", err)
	if len(page2) != 10 || page2[0].ID != ids[48] || page2[9].ID != ids[39] {
		t.Errorf("page 2 after deletes: %d workflows from %s to %s, want 10 from %s to %s",
			len(page2), page2[0].ID, page2[len(page2)-1].ID, ids[48], ids[39])
	}
}

// testCrossWorkflow checks that a message, document or trace of workflow A
// is not reachable through workflow B.
func testCrossWorkflow(t *testing.T, f Fixture) {
	ctx := context.Background()
	a, aMsg, aDoc := create(t, f.Store, newWorkflow("alice"))
	b, bMsg, _ := create(t, f.Store, newWorkflow("bob"))
	aTrace := workflow.Trace{ID: workflow.NewID(workflow.PrefixTrace), WorkflowID: a.ID, Stage: workflow.StageOne}
	must(t, "AppendTrace", f.Store.AppendTrace(ctx, aTrace))

	_, err := f.Store.DocumentContent(ctx, b.ID, aDoc.ID)
	wantKind(t, "A's document through B", err, workflow.KindNotFound)
	msgs, err := f.Store.Messages(ctx, b.ID, 0, 0)
	must(t, "Messages(B)", err)
	if len(msgs) != 1 || msgs[0].ID != bMsg.ID {
		t.Errorf("B's messages = %v, want only %s (not A's %s)", msgs, bMsg.ID, aMsg.ID)
	}
	traces, err := f.Store.Traces(ctx, b.ID)
	must(t, "Traces(B)", err)
	if len(traces) != 0 {
		t.Errorf("B has %d traces, want 0 (A's trace leaked)", len(traces))
	}
	got, err := f.Store.GetTrace(ctx, aTrace.ID)
	must(t, "GetTrace", err)
	if got.WorkflowID != a.ID {
		t.Errorf("GetTrace workflowId = %s, want %s", got.WorkflowID, a.ID)
	}
}
