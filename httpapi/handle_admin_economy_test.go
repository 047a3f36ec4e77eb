package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/workflow"
)

// The economy route answers workflow.ComputeEconomy's figures for the
// stored traces, messages and documents; checked here by hand with the
// default counter (a token per 4 characters, rounded up).
func TestAdminEconomy(t *testing.T) {
	t.Parallel()
	store := memstore.New()
	f := newAdminFixture(t, store)
	wf := seed(t, store, "alice", 1, nil)
	ctx := context.Background()
	next := wf.Clone()
	next.Step = 2
	action := workflow.Message{ID: workflow.NewID(workflow.PrefixMessage), Round: 1, Step: 1, Role: workflow.RoleAction,
		Action: "test.echo", ActionObjective: "echo", Parameters: map[string]any{"text": "hi"}, Text: "hi"}
	doc := workflow.DocumentContent{Document: workflow.Document{ID: workflow.NewID(workflow.PrefixDocument), Name: "out.txt",
		MimeType: "text/plain", Size: 40}, Content: []byte("0123456789012345678901234567890123456789")} // 10 tokens
	action.Documents = []workflow.Document{doc.Document}
	doc.MessageID = action.ID
	action.Documents[0].MessageID = action.ID
	if _, _, err := store.Commit(ctx, workflow.Commit{Workflow: next, ExpectedVersion: wf.Version,
		Messages: []workflow.Message{action}, Documents: []workflow.DocumentContent{doc}}); err != nil {
		t.Fatal(err)
	}
	for _, tr := range []workflow.Trace{
		{Round: 1, Step: 1, Stage: workflow.StageOne, PromptTokens: 40},
		{Round: 1, Step: 1, Stage: workflow.StageTwo, PromptTokens: 8},
		{Round: 1, Step: 2, Stage: workflow.StageOne, PromptTokens: 50},
		{Round: 1, Step: 2, Stage: workflow.StageTwo, PromptTokens: 6},
	} {
		tr.ID, tr.WorkflowID = workflow.NewID(workflow.PrefixTrace), wf.ID
		if err := store.AppendTrace(ctx, tr); err != nil {
			t.Fatal(err)
		}
	}
	rec := f.env.do(t, "GET", "/admin/v1/workflows/"+wf.ID+"/economy", adminToken, nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("economy: %d %s", rec.Code, rec.Body)
	}
	var got workflow.Economy
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	// The base is step 1's Stage 1 call, 40. Step 1: 40. Step 2: 40 + the action record
	// "Thought: echo\nAction: test.echo {\"text\":\"hi\"}\nObservation: hi"
	// (13+1+18+13+1+15 = 61 chars, 16 tokens) + the document's 10 = 66.
	want := workflow.Economy{
		Steps: []workflow.EconomyStep{
			{Round: 1, Step: 1, Stage1Tokens: 40, Stage2Tokens: 8, NaiveTokens: 40},
			{Round: 1, Step: 2, Stage1Tokens: 50, Stage2Tokens: 6, NaiveTokens: 66},
		},
		Totals:             workflow.EconomyTotals{Stage1Tokens: 90, Stage2Tokens: 14, PromptTokens: 104},
		NaiveReactEstimate: 106,
		Ratio:              104.0 / 106,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("economy (-want +got):\n%s", diff)
	}
	if rec := f.env.do(t, "GET", "/admin/v1/workflows/wf_missing/economy", adminToken, nil); rec.Code != http.StatusNotFound {
		t.Errorf("missing workflow: %d, want 404", rec.Code)
	}
}
