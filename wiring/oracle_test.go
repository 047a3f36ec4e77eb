package wiring

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/workflow"
)

// TestNoExistenceOracle: on every per-workflow route, another user's
// workflow, a workflow that does not exist and a malformed id get the same
// status and byte-identical bodies (the id aside), so no answer tells
// whether a workflow exists; nor whether one of its documents does.
func TestNoExistenceOracle(t *testing.T) {
	t.Parallel()
	const alice, bob = "alice-token-000000001", "bob-token-00000000002"
	cfg, err := LoadConfig(envOf(map[string]string{"GATEWAY_TOKENS": "alice:" + alice + ",bob:" + bob, "LLM_PROVIDER": "scripted"}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	g, err := Wire(ctx, cfg, zerolog.New(io.Discard), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.closeStore()
	g.Engine.Start(ctx)
	defer g.Engine.Shutdown(context.Background())
	wf, err := g.Engine.Create(ctx, engine.NewWorkflow{UserID: "alice", Prompt: "hello", Documents: []workflow.DocumentContent{
		{Document: workflow.Document{Name: "a.txt", MimeType: "text/plain", Size: 1}, Content: []byte("a")}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := enginetest.Await(ctx, g.Changes, g.Store.GetWorkflow, wf.ID); err != nil {
		t.Fatal(err)
	}
	msgs, err := g.Store.Messages(ctx, wf.ID, 0, 10)
	if err != nil || len(msgs) == 0 || len(msgs[0].Documents) != 1 {
		t.Fatalf("alice's first message: %+v, %v", msgs, err)
	}
	realDoc := msgs[0].Documents[0].ID
	h := g.API.Routes()
	answer := func(method, path, body string) (int, string) {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("Authorization", "Bearer "+bob)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	missing := workflow.NewID(workflow.PrefixWorkflow)
	routes := []struct{ method, path, body string }{
		{"GET", "/api/v1/workflows/ID", ""},
		{"DELETE", "/api/v1/workflows/ID", ""},
		{"POST", "/api/v1/workflows/ID/rounds", `{"prompt":"more"}`},
		{"POST", "/api/v1/workflows/ID/stop", ""},
		{"POST", "/api/v1/workflows/ID/resume", ""},
		{"GET", "/api/v1/workflows/ID/messages", ""},
		{"GET", "/api/v1/workflows/ID/documents/doc_01m87x5ngx73yazfyyacgv65rr", ""},
		{"GET", "/api/v1/workflows/ID/documents/" + realDoc, ""},
		{"POST", "/api/v1/workflows/ID/approvals/apr_01m87x5ngx73yazfyyacgv65rr", `{"decision":"approve"}`},
		{"GET", "/api/v1/workflows/ID/events", ""},
	}
	for _, r := range routes {
		var first string
		for _, id := range []string{wf.ID, missing, "wf_not-valid"} {
			status, body := answer(r.method, strings.Replace(r.path, "ID", id, 1), r.body)
			got := strings.ReplaceAll(body, id, "ID")
			if status != http.StatusNotFound {
				t.Errorf("%s %s (%s): %d %s, want 404", r.method, r.path, id, status, body)
			}
			if first == "" {
				first = got
			} else if got != first {
				t.Errorf("%s %s: answers differ:\n  alice's: %s\n  %s: %s", r.method, r.path, first, id, got)
			}
		}
	}
	if got, err := g.Engine.Get(ctx, "alice", wf.ID); err != nil || got.ID != wf.ID {
		t.Fatalf("bob's requests changed alice's workflow: %v", err)
	}
}
