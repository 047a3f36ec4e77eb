package httpapi

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/workflow"
)

// TestUploadStreamOverHTTP: through the real route, an escaped-slash
// upload decodes, a body over maxBodyBytes is huma's 413, and a bad
// document is still reported with the others.
func TestUploadStreamOverHTTP(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, func(o *Options) { o.Limits.MaxBodyBytes = 4096 })
	var got engine.NewWorkflow
	env.engine.CreateFn = func(in engine.NewWorkflow) (*workflow.Workflow, error) {
		got = in
		return testWorkflow(in.UserID, workflow.StatusRunning), nil
	}
	rec := env.do(t, "POST", "/api/v1/workflows", aliceToken, `{"prompt":"p","documents":[{"name":"a.txt","content":"P\/8\/"}]}`)
	if rec.Code != http.StatusCreated || len(got.Documents) != 1 || !bytes.Equal(got.Documents[0].Content, []byte{0x3f, 0xff, 0x3f}) {
		t.Fatalf("escaped slashes: %d %s, documents %+v", rec.Code, rec.Body, got.Documents)
	}
	rec = env.do(t, "POST", "/api/v1/workflows", aliceToken, `{"prompt":"p","documents":[{"name":"a","content":"`+strings.Repeat("QUJD", 1100)+`"}]}`)
	if rec.Code != http.StatusRequestEntityTooLarge || !strings.Contains(rec.Body.String(), "larger than 4096 bytes (limits.maxBodyBytes") {
		t.Errorf("oversized body: %d %s", rec.Code, rec.Body)
	}
	rec = env.do(t, "POST", "/api/v1/workflows", aliceToken, `{"prompt":"p","documents":[{"name":"../a","content":"eA=="},{"name":"b","content":"-_"}]}`)
	if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "body.documents[0].name") ||
		!strings.Contains(rec.Body.String(), "body.documents[1].content") {
		t.Errorf("two bad documents: %d %s", rec.Code, rec.Body)
	}
}

// TestUploadStreamOnNewRounds: the rounds route decodes its documents
// through the same stream: the engine gets the bytes, a bad one is a 422
// naming it, an over-size one a 413.
func TestUploadStreamOnNewRounds(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, func(o *Options) { o.Limits.MaxDocumentBytes = 16 })
	w := testWorkflow("alice", workflow.StatusCompleted)
	env.store.put(w)
	var got engine.NewRound
	env.engine.StartFn = func(_, _ string, in engine.NewRound) (*workflow.Workflow, error) {
		got = in
		return testWorkflow("alice", workflow.StatusRunning), nil
	}
	path := "/api/v1/workflows/" + w.ID + "/rounds"
	rec := env.do(t, "POST", path, aliceToken, `{"documents":[{"name":"a.txt","content":"aGk="},{"name":"b.txt","content":"P\/8\/"}],"prompt":"more"}`)
	if rec.Code != http.StatusAccepted || got.Prompt != "more" || len(got.Documents) != 2 ||
		string(got.Documents[0].Content) != "hi" || !bytes.Equal(got.Documents[1].Content, []byte{0x3f, 0xff, 0x3f}) {
		t.Fatalf("round with documents: %d %s, engine got %+v", rec.Code, rec.Body, got)
	}
	rec = env.do(t, "POST", path, aliceToken, `{"prompt":"more","documents":[{"name":"a.txt","content":"a!=="}]}`)
	if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "body.documents[0].content") {
		t.Errorf("bad base64: %d %s", rec.Code, rec.Body)
	}
	rec = env.do(t, "POST", path, aliceToken, `{"prompt":"more","documents":[{"name":"a.txt","content":"`+b64(strings.Repeat("x", 17))+`"}]}`)
	if rec.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("over-size document: %d %s", rec.Code, rec.Body)
	}
}

// countingBody counts the bytes read from it.
type countingBody struct {
	r    io.Reader
	read int
}

func (c *countingBody) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.read += n
	return n, err
}

// TestUploadStreamRefusesADeclaredOversizeBody: a body whose
// Content-Length is over maxBodyBytes is a 413 before a byte of it is
// read; one of unknown length is refused once maxBodyBytes were read.
func TestUploadStreamRefusesADeclaredOversizeBody(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, func(o *Options) { o.Limits.MaxBodyBytes = 4096 })
	body := `{"prompt":"` + strings.Repeat("a", 5000) + `"}`
	for _, tt := range []struct {
		name     string
		length   int64
		wantRead func(int) bool
	}{
		{"declared", int64(len(body)), func(n int) bool { return n == 0 }},
		{"unknown length", -1, func(n int) bool { return n >= 4096 && n < len(body) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := &countingBody{r: strings.NewReader(body)}
			req := httptest.NewRequest("POST", "/api/v1/workflows", src)
			req.ContentLength = tt.length
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+aliceToken)
			rec := httptest.NewRecorder()
			env.srv.Routes().ServeHTTP(rec, req)
			if rec.Code != http.StatusRequestEntityTooLarge || !strings.Contains(rec.Body.String(), "larger than 4096 bytes (limits.maxBodyBytes") {
				t.Errorf("%d %s, want 413 naming the limit", rec.Code, rec.Body)
			}
			if !tt.wantRead(src.read) {
				t.Errorf("read %d of the body's %d bytes", src.read, len(body))
			}
		})
	}
}
