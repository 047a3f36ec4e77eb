package httpapi

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/twostep/twostep/apiv1"
	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/workflow"
)

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func TestCreateWorkflow(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, nil)
	var got engine.NewWorkflow
	env.engine.CreateFn = func(in engine.NewWorkflow) (*workflow.Workflow, error) {
		got = in
		w := testWorkflow(in.UserID, workflow.StatusRunning)
		w.MaxSteps = in.MaxSteps
		return w, nil
	}
	rec := env.do(t, "POST", "/api/v1/workflows", aliceToken, map[string]any{
		"prompt": "summarise", "mode": "actionplan", "maxSteps": 7,
		"documents": []map[string]string{{"name": "notes.txt", "content": b64("hello")}},
	})
	if rec.Code != http.StatusCreated {
		t.Fatalf("status = %d, want 201: %s", rec.Code, rec.Body)
	}
	var body map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	if loc, want := rec.Header().Get("Location"), "/api/v1/workflows/"+body["id"].(string); loc != want {
		t.Errorf("Location = %q, want %q", loc, want)
	}
	if got.UserID != "alice" || got.Prompt != "summarise" || got.Mode != workflow.ModeActionPlan || got.MaxSteps != 7 {
		t.Errorf("engine got %+v", got)
	}
	if len(got.Documents) != 1 || string(got.Documents[0].Content) != "hello" || got.Documents[0].Name != "notes.txt" ||
		!strings.HasPrefix(got.Documents[0].MimeType, "text/plain") || got.Documents[0].Size != 5 {
		t.Errorf("documents = %+v", got.Documents)
	}
	for _, k := range []string{"id", "userId", "mode", "status", "stopReason", "round", "step", "maxSteps", "error", "stats", "createdAt", "updatedAt"} {
		if _, ok := body[k]; !ok {
			t.Errorf("workflow JSON lacks %q: %s", k, rec.Body)
		}
	}
	for _, k := range []string{"version", "checkpoint", "$schema"} {
		if _, ok := body[k]; ok {
			t.Errorf("workflow JSON exposes %q", k)
		}
	}
}

// TestCreateAcceptsEmptyDocument: an empty file is a legitimate upload (a
// placeholder, an empty export) and reaches the engine with size 0.
func TestCreateAcceptsEmptyDocument(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, nil)
	var got engine.NewWorkflow
	env.engine.CreateFn = func(in engine.NewWorkflow) (*workflow.Workflow, error) {
		got = in
		return testWorkflow(in.UserID, workflow.StatusRunning), nil
	}
	rec := env.do(t, "POST", "/api/v1/workflows", aliceToken, map[string]any{
		"prompt": "x", "documents": []map[string]string{{"name": "empty.txt", "content": ""}},
	})
	if rec.Code != http.StatusCreated {
		t.Fatalf("status = %d, want 201: %s", rec.Code, rec.Body)
	}
	if len(got.Documents) != 1 || got.Documents[0].Name != "empty.txt" || got.Documents[0].Size != 0 || len(got.Documents[0].Content) != 0 {
		t.Errorf("documents = %+v", got.Documents)
	}
}

// TestCreateRejectsBadInput sends malformed creates: each must answer a 4xx
// problem and never reach the engine.
func TestCreateRejectsBadInput(t *testing.T) {
	t.Parallel()
	doc := func(name, content string) map[string]any { return map[string]any{"name": name, "content": content} }
	many := make([]map[string]any, 21)
	for i := range many {
		many[i] = doc("f"+strings.Repeat("x", i)+".txt", b64("x"))
	}
	tests := []struct {
		name   string
		body   any
		status int
		detail string
	}{
		{"not json", "{prompt:", 400, ""},
		{"empty body", "", 400, "body is required"},
		{"array body", `[]`, 422, ""},
		{"prompt missing", map[string]any{}, 422, "prompt"},
		{"prompt wrong type", map[string]any{"prompt": 5}, 422, "string"},
		{"prompt blank", map[string]any{"prompt": "   "}, 422, "blank"},
		{"prompt too long", map[string]any{"prompt": strings.Repeat("é", 20001)}, 422, "limit is 20000"},
		{"unknown field", map[string]any{"prompt": "x", "promt": "y"}, 422, "promt"},
		{"bad mode", map[string]any{"prompt": "x", "mode": "chaos"}, 422, "mode"},
		{"maxSteps zero", map[string]any{"prompt": "x", "maxSteps": 0}, 422, "maxSteps"},
		{"maxSteps 101", map[string]any{"prompt": "x", "maxSteps": 101}, 422, "maxSteps"},
		{"maxSteps float", map[string]any{"prompt": "x", "maxSteps": 2.5}, 422, ""},
		{"documents not array", map[string]any{"prompt": "x", "documents": "a"}, 422, ""},
		{"too many documents", map[string]any{"prompt": "x", "documents": many}, 422, "limit is 20"},
		{"bad base64", map[string]any{"prompt": "x", "documents": []any{doc("a.txt", "!!!")}}, 422, "base64"},
		{"slash name", map[string]any{"prompt": "x", "documents": []any{doc("../etc/passwd", b64("x"))}}, 422, "path separators"},
		{"backslash name", map[string]any{"prompt": "x", "documents": []any{doc(`a\b.txt`, b64("x"))}}, 422, "path separators"},
		{"dotdot name", map[string]any{"prompt": "x", "documents": []any{doc("..", b64("x"))}}, 422, ".."},
		{"control char name", map[string]any{"prompt": "x", "documents": []any{doc("a\x00b", b64("x"))}}, 422, "control"},
		{"newline name", map[string]any{"prompt": "x", "documents": []any{doc("a\nb", b64("x"))}}, 422, "control"},
		{"colon name", map[string]any{"prompt": "x", "documents": []any{doc("docItem:x", b64("x"))}}, 422, "':'"},
		{"duplicate names", map[string]any{"prompt": "x", "documents": []any{doc("a", b64("x")), doc("a", b64("y"))}}, 422, "duplicate"},
		{"bad mime", map[string]any{"prompt": "x", "documents": []any{map[string]any{"name": "a", "mimeType": "nonsense", "content": b64("x")}}}, 422, "media type"},
		{"document too large", map[string]any{"prompt": "x", "documents": []any{doc("a", b64(strings.Repeat("x", 2048)))}}, 413, "limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := newTestEnv(t, func(o *Options) { o.Limits.MaxDocumentBytes = 1024 })
			rec := env.do(t, "POST", "/api/v1/workflows", aliceToken, tt.body)
			if rec.Code != tt.status {
				t.Fatalf("status = %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
			p := problem(t, rec)
			if !strings.Contains(rec.Body.String(), tt.detail) {
				t.Errorf("problem %v does not mention %q", p, tt.detail)
			}
			if calls := env.engine.Calls(); len(calls) != 0 {
				t.Errorf("engine was called: %v", calls)
			}
		})
	}
}

// TestCreateReportsEveryBadDocument: three bad documents in one request
// get one 422 with one error per problem, each naming its document, not
// just the first.
func TestCreateReportsEveryBadDocument(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, nil)
	doc := func(name, content string) map[string]any { return map[string]any{"name": name, "content": content} }
	body := map[string]any{"prompt": "x", "documents": []any{
		doc("a.txt", "!!!"), doc("ok.txt", b64("fine")), doc("../b.txt", b64("x")), doc("c.txt", "%%%"),
	}}
	rec := env.do(t, "POST", "/api/v1/workflows", aliceToken, body)
	if rec.Code != http.StatusUnprocessableEntity {
		t.Fatalf("status = %d, want 422: %s", rec.Code, rec.Body)
	}
	var p struct {
		Detail string
		Errors []struct{ Location, Message string }
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
		t.Fatal(err)
	}
	var locs []string
	for _, e := range p.Errors {
		locs = append(locs, e.Location)
	}
	want := []string{"body.documents[0].content", "body.documents[2].name", "body.documents[3].content"}
	if strings.Join(locs, ",") != strings.Join(want, ",") || !strings.Contains(p.Detail, "3 problems") {
		t.Errorf("problem %q with errors at %v, want 3 problems at %v", p.Detail, locs, want)
	}
	if calls := env.engine.Calls(); len(calls) != 0 {
		t.Errorf("engine was called: %v", calls)
	}
}

func TestBodyLimit(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, func(o *Options) { o.Limits.MaxBodyBytes = 4096 })
	body := `{"prompt":"` + strings.Repeat("a", 5000) + `"}`
	for _, path := range []string{"/api/v1/workflows", "/api/v1/workflows/" + workflow.NewID(workflow.PrefixWorkflow) + "/rounds"} {
		rec := env.do(t, "POST", path, aliceToken, body)
		if rec.Code != http.StatusRequestEntityTooLarge {
			t.Errorf("%s: status = %d, want 413", path, rec.Code)
		}
		problem(t, rec)
	}
	if calls := env.engine.Calls(); len(calls) != 0 {
		t.Errorf("engine was called: %v", calls)
	}
}

func TestListWorkflowsScopedToUser(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, nil)
	mine := testWorkflow("alice", workflow.StatusCompleted)
	env.store.put(mine)
	env.store.put(testWorkflow("bob", workflow.StatusRunning))
	rec := env.do(t, "GET", "/api/v1/workflows?limit=10", aliceToken, nil)
	if rec.Code != 200 {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	var got apiv1.WorkflowList
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Workflows) != 1 || got.Workflows[0].ID != mine.ID {
		t.Errorf("alice sees %+v, want only %s", got.Workflows, mine.ID)
	}
	for _, q := range []string{"limit=0", "limit=201", "limit=x", "cursor=" + strings.Repeat("c", 600), "bogus=1"} {
		rec := env.do(t, "GET", "/api/v1/workflows?"+q, aliceToken, nil)
		if rec.Code != 422 && rec.Code != 400 {
			t.Errorf("?%s: status %d, want 400/422", q, rec.Code)
		}
		problem(t, rec)
	}
	env.store.listErr = workflow.Errorf(workflow.KindInvalid, "bad cursor")
	rec = env.do(t, "GET", "/api/v1/workflows?cursor=zzz", aliceToken, nil)
	if rec.Code != 422 || !strings.Contains(problem(t, rec)["detail"].(string), "cursor") {
		t.Errorf("bad cursor: %d %s", rec.Code, rec.Body)
	}
}

// TestOtherUsersWorkflowIs404 checks every store-backed route answers
// another user's workflow exactly like a missing one.
func TestOtherUsersWorkflowIs404(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, nil)
	bobs := testWorkflow("bob", workflow.StatusCompleted)
	doc := workflow.DocumentContent{Document: workflow.Document{ID: workflow.NewID(workflow.PrefixDocument), WorkflowID: bobs.ID, Name: "a.txt", MimeType: "text/plain", Size: 1}, Content: []byte("x")}
	env.store.put(bobs, workflow.Message{ID: workflow.NewID(workflow.PrefixMessage), Role: workflow.RoleUser, Text: "bob's secret"})
	env.store.docs[doc.ID] = doc
	missing := workflow.NewID(workflow.PrefixWorkflow)
	for _, id := range []string{bobs.ID, missing, "wf_nope", "../../etc"} {
		for _, path := range []string{"/messages", "/events", "/documents/" + doc.ID} {
			rec := env.do(t, "GET", "/api/v1/workflows/"+id+path, aliceToken, nil)
			if rec.Code != 404 {
				t.Errorf("%s%s: status %d, want 404", id, path, rec.Code)
				continue
			}
			if strings.Contains(rec.Body.String(), "bob's secret") {
				t.Errorf("%s%s leaks bob's data", id, path)
			}
			problem(t, rec)
		}
	}
	// Bob himself reads it, and a document id of another workflow is 404.
	if rec := env.do(t, "GET", "/api/v1/workflows/"+bobs.ID+"/documents/"+doc.ID, bobToken, nil); rec.Code != 200 {
		t.Errorf("bob's own document: %d", rec.Code)
	}
	other := testWorkflow("bob", workflow.StatusCompleted)
	env.store.put(other)
	if rec := env.do(t, "GET", "/api/v1/workflows/"+other.ID+"/documents/"+doc.ID, bobToken, nil); rec.Code != 404 {
		t.Errorf("document through another workflow: %d, want 404", rec.Code)
	}
}

// TestRejectedBodyIsNotEchoed: a large malformed body is not sent back in
// the problem's error details.
func TestRejectedBodyIsNotEchoed(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, nil)
	body := `{"prompt": "` + strings.Repeat("z", 100000)
	rec := env.do(t, "POST", "/api/v1/workflows", aliceToken, body)
	if rec.Code != 400 {
		t.Fatalf("status %d", rec.Code)
	}
	problem(t, rec)
	if rec.Body.Len() > 2000 {
		t.Errorf("problem is %d bytes: the body was echoed", rec.Body.Len())
	}
}

// A compaction's summary message is listed in seq order with role summary
// and the seq it covers through; other messages carry no compactedThrough.
func TestMessagesListSummaries(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, nil)
	w := testWorkflow("alice", workflow.StatusRunning)
	env.store.put(w,
		workflow.Message{ID: "m1", Role: workflow.RoleUser, Text: "hi"},
		workflow.Message{ID: "m2", Role: workflow.RoleAction, Action: "test.echo", Status: workflow.MessageSuccess},
		workflow.Message{ID: "m3", Role: workflow.RoleSummary, Text: "step 1 echoed hi", CompactedThrough: 2})
	rec := env.do(t, "GET", "/api/v1/workflows/"+w.ID+"/messages", aliceToken, nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("status = %d: %s", rec.Code, rec.Body)
	}
	var body struct {
		Messages []map[string]any `json:"messages"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || len(body.Messages) != 3 {
		t.Fatalf("body %s (%v)", rec.Body, err)
	}
	last := body.Messages[2]
	if last["role"] != "summary" || last["compactedThrough"] != 2.0 || last["text"] != "step 1 echoed hi" {
		t.Errorf("summary message = %v", last)
	}
	if _, ok := body.Messages[1]["compactedThrough"]; ok {
		t.Errorf("an action message carries compactedThrough: %v", body.Messages[1])
	}
}
