package storetest

import (
	"context"
	"slices"
	"testing"

	"github.com/twostep/twostep/workflow"
)

// testListAll pages through every user's workflows, as an administrator
// does: newest first across users, no duplicate and no gap across pages,
// deleted workflows left out — also when the workflow a cursor names is
// deleted between two pages.
func testListAll(t *testing.T, f Fixture) {
	ctx := context.Background()
	users := []string{"alice", "bob", "carol", "alice", "dave", "bob", "erin", "alice", "carol", "frank"}
	var created []string // creation order
	for _, u := range users {
		wf, _, _ := create(t, f.Store, newWorkflow(u))
		created = append(created, wf.ID)
	}
	// A later commit must not move a workflow in the listing.
	first, err := f.Store.GetWorkflow(ctx, created[0])
	must(t, "GetWorkflow", err)
	step(t, f.Store, first, "touch")
	must(t, "DeleteWorkflow", f.Store.DeleteWorkflow(ctx, created[4]))

	want := newestFirst(created, created[4])
	all, next, err := f.Store.ListAll(ctx, workflow.Page{})
	must(t, "ListAll", err)
	if got := ids(all); !slices.Equal(got, want) || next != "" {
		t.Errorf("ListAll = %v, cursor %q; want %v and no cursor", got, next, want)
	}
	seenUsers := map[string]bool{}
	for _, wf := range all {
		seenUsers[wf.UserID] = true
	}
	if len(seenUsers) != 5 || seenUsers["dave"] {
		t.Errorf("ListAll shows workflows of %v, want 5 users (dave's only workflow is deleted)", seenUsers)
	}

	// Page 1 ends at want[2]; delete it and the first workflow of page 2
	// before reading page 2.
	page1, next, err := f.Store.ListAll(ctx, workflow.Page{Limit: 3})
	must(t, "ListAll(page 1)", err)
	if got := ids(page1); !slices.Equal(got, want[:3]) || next == "" {
		t.Fatalf("page 1 = %v, cursor %q; want %v and a cursor", got, next, want[:3])
	}
	must(t, "DeleteWorkflow(last of page 1)", f.Store.DeleteWorkflow(ctx, want[2]))
	must(t, "DeleteWorkflow(first of page 2)", f.Store.DeleteWorkflow(ctx, want[3]))
	got := ids(page1)
	for page := 2; next != ""; page++ {
		if page > 5 {
			t.Fatal("listing does not end")
		}
		list, cursor, err := f.Store.ListAll(ctx, workflow.Page{Limit: 3, Cursor: next})
		must(t, "ListAll", err)
		if len(list) > 3 || (cursor != "" && len(list) != 3) {
			t.Errorf("page %d has %d workflows (cursor %q), want 3, or at most 3 on the last page", page, len(list), cursor)
		}
		got = append(got, ids(list)...)
		next = cursor
	}
	if want := slices.Concat(want[:3], want[4:]); !slices.Equal(got, want) {
		t.Errorf("pages = %v, want %v (newest first, no duplicate, no gap)", got, want)
	}

	for _, cursor := range []string{"not a cursor!", "d2ZfMTIz"} {
		_, _, err := f.Store.ListAll(ctx, workflow.Page{Cursor: cursor})
		wantKind(t, "ListAll(cursor "+cursor+")", err, workflow.KindInvalid)
	}
}

// testListAllEmpty lists an empty store: no workflows, no cursor.
func testListAllEmpty(t *testing.T, f Fixture) {
	list, next, err := f.Store.ListAll(context.Background(), workflow.Page{Limit: 5})
	must(t, "ListAll", err)
	if len(list) != 0 || next != "" {
		t.Errorf("ListAll of an empty store = %d workflows, cursor %q; want none", len(list), next)
	}
}

// newestFirst returns ids (in creation order) newest first, without skip.
func newestFirst(ids []string, skip string) []string {
	out := make([]string, 0, len(ids))
	for _, id := range slices.Backward(ids) {
		if id != skip {
			out = append(out, id)
		}
	}
	return out
}

// ids returns the ids of a listing, in order.
func ids(list []*workflow.Workflow) []string {
	out := make([]string, len(list))
	for i, wf := range list {
		out[i] = wf.ID
	}
	return out
}
