package test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// connLLM is an OpenAI-compatible server scripted for one workflow: Stage 1
// picks http.request on the "crm" connection, then workflow.complete. It
// keeps every prompt it was sent.
type connLLM struct {
	mu      sync.Mutex
	stage1  int
	prompts []string
	// method is the HTTP method Stage 2 fills in (GET when empty).
	method string
}

func (m *connLLM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	var all strings.Builder
	for _, msg := range req.Messages {
		all.WriteString(contentText(msg.Content) + "\n")
	}
	prompt := all.String()
	m.mu.Lock()
	m.prompts = append(m.prompts, prompt)
	var reply any
	switch {
	case strings.Contains(prompt, "You are the planner"):
		m.stage1++
		sel := map[string]any{"learnings": []string{}, "requiredInputDocuments": []string{}}
		if m.stage1 == 1 {
			sel["action"], sel["actionObjective"], sel["requiredConnection"] = "http.request", "read the accounts", "crm"
			sel["parametersContext"] = "GET /accounts"
			sel["parametersSchema"] = map[string]any{"fields": []any{
				map[string]any{"name": "method", "type": "enum", "required": true},
				map[string]any{"name": "path", "type": "string", "required": true}}}
		} else {
			sel["action"], sel["actionObjective"], sel["requiredConnection"] = "workflow.complete", "answer", nil
			sel["parametersContext"] = "say done"
			sel["parametersSchema"] = map[string]any{"fields": []any{map[string]any{"name": "message", "type": "string", "required": true}}}
		}
		reply = sel
	case strings.Contains(prompt, "GET /accounts"):
		method := m.method
		if method == "" {
			method = "GET"
		}
		reply = map[string]any{"schema": "parameters_v1", "parameters": map[string]any{"method": method, "path": "/accounts"}}
	default:
		reply = map[string]any{"schema": "parameters_v1", "parameters": map[string]any{"message": "done"}}
	}
	m.mu.Unlock()
	content, _ := json.Marshal(reply)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-conn", "object": "chat.completion", "created": 1, "model": "fake-model",
		"choices": []map[string]any{{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": string(content)}}},
		"usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
	})
}

// TestConnectionSecretStaysInTheRequest runs http.request on a connection
// whose header secret is a unique marker, against a hostile service that
// echoes every request header back: the secret reaches that service and
// nothing else — no prompt the model saw, no stored trace, no log line, no
// API response (workflow, messages, documents, actions, admin traces).
func TestConnectionSecretStaysInTheRequest(t *testing.T) {
	t.Parallel()
	const secret = "conn-secret-MARKER-7c1e55aa90"
	var mu sync.Mutex
	var got http.Header
	crm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = r.Header.Clone()
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"path": r.URL.Path, "accounts": []string{"acme"}, "echo": r.Header})
	}))
	t.Cleanup(crm.Close)
	model := &connLLM{}
	llmSrv := httptest.NewServer(model)
	t.Cleanup(llmSrv.Close)

	cfg := filepath.Join(t.TempDir(), "gateway.yaml")
	yaml := "connections:\n  - user: alice\n    label: crm\n    kind: http\n    baseURL: " + crm.URL + "/api\n" +
		"    description: the CRM\n    headers:\n      Authorization: Bearer ${E2E_CONN_SECRET}\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, nil, "OPENAI_BASE_URL="+llmSrv.URL+"/v1", "GATEWAY_CONFIG="+cfg, "E2E_CONN_SECRET="+secret)

	var wf wfView
	g.expect(t, http.StatusCreated, "POST", "/api/v1/workflows", gwAlice, map[string]any{"prompt": "list the CRM accounts"}, &wf)
	if done := g.waitDone(t, gwAlice, wf.ID); done.Status != "completed" {
		t.Fatalf("workflow ended %s (%s)", done.Status, done.Error)
	}

	mu.Lock()
	auth, idem := got.Get("Authorization"), got.Get("Idempotency-Key")
	mu.Unlock()
	if auth != "Bearer "+secret {
		t.Fatalf("the CRM got Authorization %q, want the configured secret", auth)
	}
	if idem != wf.ID+":1:1" {
		t.Errorf("Idempotency-Key = %q, want %q", idem, wf.ID+":1:1")
	}

	leaks := map[string]string{}
	check := func(what string, data []byte) {
		if strings.Contains(string(data), secret) {
			leaks[what] = string(data)
		}
	}
	model.mu.Lock()
	for i, p := range model.prompts {
		check("prompt "+string(rune('0'+i)), []byte(p))
	}
	model.mu.Unlock()
	var docs []string
	sawAction := false
	for _, m := range g.messages(t, gwAlice, wf.ID) {
		if m.Action == "http.request" {
			sawAction = m.Status == "success" && len(m.Documents) == 1
		}
		for _, d := range m.Documents {
			docs = append(docs, d.ID)
		}
	}
	if !sawAction {
		t.Fatalf("no successful http.request message with its response document")
	}
	for _, path := range []string{
		"/api/v1/workflows/" + wf.ID, "/api/v1/workflows/" + wf.ID + "/messages", "/api/v1/workflows",
		"/api/v1/actions", "/api/v1/workflows/" + wf.ID + "/events",
	} {
		_, _, body := g.send(t, "GET", path, gwAlice, nil)
		check(path, body)
	}
	for _, id := range docs {
		status, _, body := g.send(t, "GET", "/api/v1/workflows/"+wf.ID+"/documents/"+id, gwAlice, nil)
		if status != http.StatusOK {
			t.Fatalf("document %s: %d", id, status)
		}
		check("document "+id, body)
		if strings.Contains(string(body), `"accounts"`) && !strings.Contains(string(body), `"Authorization":["[REDACTED]"]`) {
			t.Errorf("the echoed Authorization header is not shown redacted in the response document: %.300s", body)
		}
	}
	for _, path := range []string{"/admin/v1/workflows/" + wf.ID + "/traces", "/admin/v1/workflows/" + wf.ID + "/messages"} {
		_, _, body := g.send(t, "GET", path, gwAdmin, nil)
		check(path, body)
	}
	check("gateway log", []byte(g.stderr.String()))
	for what, data := range leaks {
		t.Errorf("the connection secret leaked into %s: %.300s", what, data)
	}
}
