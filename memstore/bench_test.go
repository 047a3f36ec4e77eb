package memstore_test

import (
	"context"
	"testing"

	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/workflow"
)

// BenchmarkCommitStep measures the commit of one step: the workflow state,
// one action message and one small document.
func BenchmarkCommitStep(b *testing.B) {
	ctx := context.Background()
	s := memstore.New()
	wf := &workflow.Workflow{ID: workflow.NewID(workflow.PrefixWorkflow), UserID: "bench", Status: workflow.StatusRunning, Mode: workflow.ModeReact}
	cur, _, err := s.Commit(ctx, workflow.Commit{Workflow: wf})
	if err != nil {
		b.Fatal(err)
	}
	content := []byte("a small action output, about one line of text")
	b.ReportAllocs()
	for b.Loop() {
		next := cur.Clone()
		next.Step++
		d := workflow.DocumentContent{Document: workflow.Document{ID: workflow.NewID(workflow.PrefixDocument), Name: "out.txt", MimeType: "text/plain"}, Content: content}
		m := workflow.Message{ID: workflow.NewID(workflow.PrefixMessage), Role: workflow.RoleAction, Action: "ai.process", Status: workflow.MessageSuccess, Summary: "ok", Documents: []workflow.Document{d.Document}}
		cur, _, err = s.Commit(ctx, workflow.Commit{Workflow: next, ExpectedVersion: cur.Version, Messages: []workflow.Message{m}, Documents: []workflow.DocumentContent{d}})
		if err != nil {
			b.Fatal(err)
		}
	}
}
