package actions

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/go-pdf/fpdf"
	"github.com/google/go-cmp/cmp"

	"github.com/twostep/twostep/workflow"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run with -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", name, diff)
	}
}

// fakeModel is a workflow.Model whose reply is a function; it records every
// request it gets.
type fakeModel struct {
	mu       sync.Mutex
	requests []workflow.ModelRequest
	reply    func(req workflow.ModelRequest) (workflow.ModelResponse, error)
}

// Generate records req and answers with reply.
func (m *fakeModel) Generate(ctx context.Context, req workflow.ModelRequest) (workflow.ModelResponse, error) {
	m.mu.Lock()
	m.requests = append(m.requests, req)
	m.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return workflow.ModelResponse{}, workflow.WrapKind(workflow.KindUnavailable, err, "cancelled")
	}
	return m.reply(req)
}

// calls returns the recorded requests.
func (m *fakeModel) calls() []workflow.ModelRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]workflow.ModelRequest(nil), m.requests...)
}

// answering returns a fake model that always answers text.
func answering(text string) *fakeModel {
	return &fakeModel{reply: func(workflow.ModelRequest) (workflow.ModelResponse, error) {
		return workflow.ModelResponse{Text: text, Model: "fake"}, nil
	}}
}

// mustNew builds a registry or fails the test.
func mustNew(t *testing.T, cfg Config, model workflow.Model, opts ...Option) *Registry {
	t.Helper()
	r, err := New(cfg, model, opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r
}

// doc returns an input document as the engine hands it to actions.
func doc(name, mimeType string, content []byte) workflow.DocumentContent {
	return workflow.DocumentContent{
		Document: workflow.Document{ID: "doc_" + name, Name: name, MimeType: mimeType, Size: int64(len(content))},
		Content:  content,
	}
}

// pdfBytes writes a real PDF with one page per element of pages, each page
// one line per string.
func pdfBytes(t testing.TB, pages ...[]string) []byte {
	t.Helper()
	f := fpdf.New("P", "mm", "A4", "")
	f.SetFont("Helvetica", "", 12)
	for _, lines := range pages {
		f.AddPage()
		for _, l := range lines {
			f.Cell(0, 10, l)
			f.Ln(12)
		}
	}
	var buf bytes.Buffer
	if err := f.Output(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// call returns an ActionCall for alice's workflow wf_1, round 2, step 3.
func call(action string, params map[string]any, docs ...workflow.DocumentContent) workflow.ActionCall {
	return workflow.ActionCall{
		WorkflowID: "wf_1", UserID: "alice", Round: 2, Step: 3,
		Action: action, Parameters: params, Documents: docs,
	}
}

// wantKind fails the test unless err is a *workflow.Error of kind k.
func wantKind(t *testing.T, err error, k workflow.Kind) {
	t.Helper()
	if err == nil {
		t.Fatalf("err = nil, want kind %s", k)
	}
	if got := workflow.KindOf(err); got != k {
		t.Fatalf("kind = %s, want %s (err: %v)", got, k, err)
	}
}
