package test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/twostep/twostep/adminv1"
)

// inventingLLM plans one POST through http.request that closes the
// ticket its context names, then the answer. Its first Stage 2 reply
// invents the ticket id; once the prompt carries validation feedback it
// takes the id from the context.
type inventingLLM struct {
	mu      sync.Mutex
	stage1  int
	stage2s []string // the Stage 2 prompts of the POST, in order
}

func (m *inventingLLM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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
	var reply any
	switch {
	case strings.Contains(prompt, "You are the planner"):
		m.stage1++
		sel := map[string]any{"learnings": []string{}, "requiredInputDocuments": []string{}}
		if m.stage1 == 1 {
			sel["action"], sel["actionObjective"], sel["requiredConnection"] = "http.request", "Close the printer ticket.", "crm"
			sel["parametersContext"] = "The printer ticket is INC-20931: POST /tickets/INC-20931/close."
			sel["parametersSchema"] = map[string]any{"fields": []any{map[string]any{"name": "method"}, map[string]any{"name": "path"}}}
		} else {
			sel["action"], sel["actionObjective"], sel["requiredConnection"] = "workflow.complete", "Tell the user.", nil
			sel["parametersContext"] = "The ticket is closed."
			sel["parametersSchema"] = map[string]any{"fields": []any{map[string]any{"name": "message"}}}
		}
		reply = sel
	case strings.Contains(prompt, "POST /tickets/"):
		m.stage2s = append(m.stage2s, prompt)
		path := "/tickets/INC-40000/close"
		if strings.Contains(prompt, "Validation feedback") {
			path = "/tickets/INC-20931/close"
		}
		reply = map[string]any{"schema": "parameters_v1", "parameters": map[string]any{"method": "POST", "path": path}}
	default:
		reply = map[string]any{"schema": "parameters_v1", "parameters": map[string]any{"message": "The ticket is closed."}}
	}
	m.mu.Unlock()
	content, _ := json.Marshal(reply)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-grounded", "object": "chat.completion", "created": 1, "model": "fake-model",
		"choices": []map[string]any{{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": string(content)}}},
		"usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
	})
}

// TestRequireGroundedThroughTheBinary: with stage2.requireGrounded: write,
// a POST whose path carries a ticket id Stage 2 invented is rejected with
// feedback naming the field and never sent; the one retry takes the id
// from the context and is sent once. The trace of the rejected reply
// lists the field.
func TestRequireGroundedThroughTheBinary(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var posts []string
	crm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		posts = append(posts, r.Method+" "+r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"closed": true}`))
	}))
	t.Cleanup(crm.Close)
	model := &inventingLLM{}
	llmSrv := httptest.NewServer(model)
	t.Cleanup(llmSrv.Close)
	cfg := filepath.Join(t.TempDir(), "gateway.yaml")
	yaml := "connections:\n  - user: alice\n    label: crm\n    kind: http\n    baseURL: " + crm.URL + "/api\n    description: the CRM\n" +
		"approvals:\n  default: never\nstage2:\n  requireGrounded: write\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, nil, "OPENAI_BASE_URL="+llmSrv.URL+"/v1", "GATEWAY_CONFIG="+cfg)

	var wf struct{ ID string }
	g.expect(t, http.StatusCreated, "POST", "/api/v1/workflows", gwAlice, map[string]any{"prompt": "close my printer ticket"}, &wf)
	if done := g.waitDone(t, gwAlice, wf.ID); done.Status != "completed" {
		t.Fatalf("workflow ended %s (%s)", done.Status, done.Error)
	}
	mu.Lock()
	sent := slices.Clone(posts)
	mu.Unlock()
	if diff := cmp.Diff([]string{"POST /api/tickets/INC-20931/close"}, sent); diff != "" {
		t.Errorf("requests the CRM got (-want +got):\n%s", diff)
	}
	model.mu.Lock()
	prompts := slices.Clone(model.stage2s)
	model.mu.Unlock()
	if len(prompts) != 2 || !strings.Contains(prompts[1], "parameters.path: this value appears neither in the objective nor in the parameters context") {
		t.Errorf("%d Stage 2 calls for the POST, want 2 with the retry's feedback naming path; the last:\n%s", len(prompts), prompts[len(prompts)-1])
	}

	var traces adminv1.TraceList
	g.expect(t, http.StatusOK, "GET", "/admin/v1/workflows/"+wf.ID+"/traces", gwAdmin, nil, &traces)
	var ungrounded [][]string
	for _, tr := range traces.Traces {
		if tr.Stage == "stage2" && tr.Step == 1 {
			ungrounded = append(ungrounded, tr.Ungrounded)
		}
	}
	if diff := cmp.Diff([][]string{{"path"}, nil}, ungrounded); diff != "" {
		t.Errorf("the POST's Stage 2 traces' ungrounded (-want +got):\n%s", diff)
	}
}
