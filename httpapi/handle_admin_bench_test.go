package httpapi

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/twostep/twostep/changefeed"
	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/templates"
	"github.com/twostep/twostep/workflow"
)

// BenchmarkAdminRenderStage1 measures POST .../render {stage: stage1} end
// to end (routing, auth, store reads, placeholders, template) for a
// workflow with 60 action messages of history.
func BenchmarkAdminRenderStage1(b *testing.B) {
	store := memstore.New()
	srv := benchAdminServer(b, store)
	wf := seed(b, store, "alice", 1, &workflow.Checkpoint{Phase: workflow.PhaseSelect})
	var msgs []workflow.Message
	for i := 1; i <= 60; i++ {
		msgs = append(msgs, workflow.Message{ID: workflow.NewID(workflow.PrefixMessage), Round: 1, Step: i,
			Role: workflow.RoleAction, Action: enginetest.Echo, ActionObjective: fmt.Sprintf("echo %d", i),
			Status: workflow.MessageSuccess, Summary: fmt.Sprintf("success: %s produced echo.txt (step %d)", enginetest.Echo, i)})
	}
	next := wf.Clone()
	next.Step = 61
	if _, _, err := store.Commit(context.Background(), workflow.Commit{Workflow: next, ExpectedVersion: wf.Version, Messages: msgs}); err != nil {
		b.Fatal(err)
	}
	path := "/admin/v1/workflows/" + wf.ID + "/render"
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest("POST", path, strings.NewReader(`{"stage":"stage1"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+adminToken)
		rec := httptest.NewRecorder()
		srv.Routes().ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatalf("%d %s", rec.Code, rec.Body)
		}
	}
}

// benchAdminServer is a Server with the admin routes over store; its API
// side has fakes that are never called.
func benchAdminServer(b *testing.B, store workflow.Store) *Server {
	set, err := templates.Load("")
	if err != nil {
		b.Fatal(err)
	}
	admin, err := NewAdmin(AdminOptions{Reads: engine.NewReader(store).Admin(), Model: scripted.New(), Registry: enginetest.NewRegistry(),
		Prompts: prompts.NewBuilder(set, prompts.Options{})})
	if err != nil {
		b.Fatal(err)
	}
	auth, err := NewAuthenticator(nil, []Credential{{UserID: "root", Token: adminToken}}, false, nil)
	if err != nil {
		b.Fatal(err)
	}
	srv, err := New(Options{Engine: &fakeEngine{unexpected: func(string) {}}, Reads: engine.NewReader(store), Store: store, Actions: fakeActions{},
		Auth: auth, Logger: zerolog.Nop(), Admin: admin.Register, Changes: changefeed.New()})
	if err != nil {
		b.Fatal(err)
	}
	return srv
}
