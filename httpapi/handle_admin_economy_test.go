package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/twostep/twostep/adminv1"
	"github.com/twostep/twostep/economy"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/workflow"
)

// The economy route answers economy.Compute's report for the stored
// traces, messages and documents, the registry's actions and the configured
// prices (the report's own arithmetic is checked by hand in economy).
func TestAdminEconomy(t *testing.T) {
	t.Parallel()
	store := memstore.New()
	prices := economy.Prices{"p/m": {Input: 3, CachedInput: 0.3, Output: 15}}
	f := newAdminFixture(t, store, func(o *AdminOptions) { o.Prices = prices })
	wf := seed(t, store, "alice", 1, nil)
	ctx := context.Background()
	next := wf.Clone()
	next.Step = 2
	action := workflow.Message{ID: workflow.NewID(workflow.PrefixMessage), Round: 1, Step: 1, Role: workflow.RoleAction,
		Action: "test.echo", ActionObjective: "echo", Parameters: map[string]any{"text": "hi"}, Text: "hi"}
	content := strings.Repeat("0123456789", 500)
	doc := workflow.DocumentContent{Document: workflow.Document{ID: workflow.NewID(workflow.PrefixDocument), Name: "out.txt",
		MimeType: "text/plain", Size: int64(len(content))}, Content: []byte(content)}
	action.Documents = []workflow.Document{doc.Document}
	doc.MessageID = action.ID
	action.Documents[0].MessageID = action.ID
	answer := workflow.Message{ID: workflow.NewID(workflow.PrefixMessage), Round: 1, Step: 2, Role: workflow.RoleAssistant, Text: "done"}
	if _, _, err := store.Commit(ctx, workflow.Commit{Workflow: next, ExpectedVersion: wf.Version,
		Messages: []workflow.Message{action, answer}, Documents: []workflow.DocumentContent{doc}}); err != nil {
		t.Fatal(err)
	}
	for _, tr := range []workflow.Trace{
		{Round: 1, Step: 1, Stage: workflow.StageOne, Model: "p/m", PromptTokens: 40, CompletionTokens: 9},
		{Round: 1, Step: 1, Stage: workflow.StageTwo, Model: "p/m", PromptTokens: 8, CompletionTokens: 3},
		{Round: 1, Step: 2, Stage: workflow.StageOne, Model: "p/m", PromptTokens: 50, CompletionTokens: 7},
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
	var got adminv1.EconomyView
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	traces, err := store.Traces(ctx, wf.ID)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := store.Messages(ctx, wf.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	in := economy.Input{Traces: traces, Messages: msgs, Actions: f.reg.Actions(), Prices: prices,
		Count:        func(s string) int { return (utf8.RuneCountInString(s) + 3) / 4 },
		DocumentText: func(d workflow.Document) string { return map[string]string{doc.ID: content}[d.ID] }}
	if diff := cmp.Diff(viewEconomy(economy.Compute(in)), got); diff != "" {
		t.Errorf("economy (-want +got):\n%s", diff)
	}
	if got.Steps[0].Stage1.Input != 40 || !got.Steps[1].Stage2Skipped || got.Totals.USD == nil {
		t.Errorf("report %+v: want step 1's Stage 1 input 40, step 2 without Stage 2, dollars", got)
	}
	// The produced document's 5,000 characters are in the plain loop's
	// second request (1,250 tokens).
	if got.PlainLoop.Input < 1250 {
		t.Errorf("plain loop input %d: the produced document's text is missing", got.PlainLoop.Input)
	}
	if rec := f.env.do(t, "GET", "/admin/v1/workflows/wf_missing/economy", adminToken, nil); rec.Code != http.StatusNotFound {
		t.Errorf("missing workflow: %d, want 404", rec.Code)
	}
}
