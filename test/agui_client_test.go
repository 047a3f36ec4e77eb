package test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// streamingLLM is fakeLLM's script served the way a streaming provider
// answers a request with "stream": true (OpenAI-compatible SSE, a few
// characters a chunk, usage last), and whole otherwise. It notes when it
// wrote the first chunk of each Stage 2 reply that answers the user.
type streamingLLM struct {
	*fakeLLM
	srv *httptest.Server

	mu          sync.Mutex
	answerFirst time.Time // when the first chunk of an answer was written
	streamed    int       // requests answered as a stream
}

func newStreamingLLM(t *testing.T) *streamingLLM {
	s := &streamingLLM{fakeLLM: newFakeLLM(t)}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *streamingLLM) serve(w http.ResponseWriter, r *http.Request) {
	var req struct {
		chatRequest
		Stream bool `json:"stream"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	var system, user strings.Builder
	for _, m := range req.Messages {
		if m.Role == "system" {
			system.WriteString(contentText(m.Content))
		} else {
			user.WriteString(contentText(m.Content))
		}
	}
	reply, _ := s.reply(r.Header.Get("Authorization"), system.String(), user.String())
	usage := map[string]any{"prompt_tokens": (system.Len() + user.Len()) / 4, "completion_tokens": len(reply) / 4,
		"total_tokens": (system.Len()+user.Len())/4 + len(reply)/4}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "chatcmpl-e2e", "object": "chat.completion", "created": 1, "model": "fake-model",
			"choices": []map[string]any{{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": reply}}},
			"usage":   usage})
		return
	}
	s.mu.Lock()
	s.streamed++
	s.mu.Unlock()
	answer := strings.Contains(reply, `"message"`)
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(v map[string]any) {
		data, _ := json.Marshal(v)
		_, _ = fmt.Fprintf(w, "data: %s\n\n", data)
		w.(http.Flusher).Flush()
	}
	for i := 0; i < len(reply); i += 6 {
		piece := reply[i:min(i+6, len(reply))]
		if answer && s.answerFirst.IsZero() && strings.Contains(reply[:i+len(piece)], `"message":"`) {
			s.mu.Lock()
			s.answerFirst = time.Now()
			s.mu.Unlock()
		}
		chunk(map[string]any{"id": "chatcmpl-e2e", "object": "chat.completion.chunk", "created": 1, "model": "fake-model",
			"choices": []map[string]any{{"index": 0, "delta": map[string]any{"content": piece}}}})
	}
	chunk(map[string]any{"id": "chatcmpl-e2e", "object": "chat.completion.chunk", "created": 1, "model": "fake-model",
		"choices": []map[string]any{{"index": 0, "delta": map[string]any{}, "finish_reason": "stop"}}})
	chunk(map[string]any{"id": "chatcmpl-e2e", "object": "chat.completion.chunk", "created": 1, "model": "fake-model",
		"choices": []map[string]any{}, "usage": usage})
	_, _ = fmt.Fprint(w, "data: [DONE]\n\n")
}

// aguiEvent is an event as the client script saw it.
type aguiEvent struct {
	Type       string `json:"type"`
	Delta      string `json:"delta"`
	ToolCallID string `json:"toolCallId"`
	Code       string `json:"code"`
	Message    string `json:"message"`
	Outcome    *struct {
		Type       string `json:"type"`
		Interrupts []struct {
			ID, Reason, ToolCallID string
		} `json:"interrupts"`
	} `json:"outcome"`
	ReceivedAt int64 `json:"receivedAt"`
}

type aguiRun struct {
	Events  []aguiEvent `json:"events"`
	Error   *string     `json:"error"`
	Pending []string    `json:"pending"`
}

func (r aguiRun) types() string {
	var out []string
	for _, e := range r.Events {
		out = append(out, e.Type)
	}
	return strings.Join(out, " ")
}

// TestAGUIClient runs the official @ag-ui/client against the built
// gateway: a document.generate call that needs approval ends the first
// run with an interrupt outcome; the resumed run approves it, and the
// answer arrives as TEXT_MESSAGE_CONTENT events whose concatenation is
// the committed message; a resume naming an unknown interrupt gets
// RUN_ERROR; the client's own event verification raises nothing.
func TestAGUIClient(t *testing.T) {
	t.Parallel()
	mods := os.Getenv("TWOSTEP_AGUI_CLIENT")
	node, err := exec.LookPath("node")
	if mods == "" || err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("CI needs node and TWOSTEP_AGUI_CLIENT (the node_modules folder holding @ag-ui/client; .ci/run installs it)")
		}
		t.Skip("set TWOSTEP_AGUI_CLIENT to a node_modules folder holding @ag-ui/client (and have node) to run")
	}
	model := newStreamingLLM(t)
	cfg := filepath.Join(t.TempDir(), "gateway.yaml")
	// Both stages answer in JSON text (json_object), the reply the model
	// streams as content.
	yaml := "approvals:\n  actions:\n    document.generate: always\n" +
		"models:\n  stage1: {outputMode: json_object}\n  stage2: {outputMode: json_object}\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, nil, "OPENAI_BASE_URL="+model.srv.URL+"/v1", "GATEWAY_CONFIG="+cfg)

	script, _ := filepath.Abs(filepath.Join("testdata", "agui", "run.cjs"))
	cmd := exec.Command(node, script)
	cmd.Env = append(os.Environ(), "TWOSTEP_AGUI_CLIENT="+mods, "GATEWAY_URL="+g.url, "GATEWAY_TOKEN="+gwAlice,
		"THREAD_ID=agui-e2e", "PROMPT=aguinote write it down")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the client script failed: %v\n%s", err, stderr.String())
	}
	var got struct {
		Paused, Resumed, Bad aguiRun
		Messages             []struct {
			Role    string
			Content any
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("client output %s: %v", out, err)
	}
	for name, r := range map[string]aguiRun{"paused": got.Paused, "resumed": got.Resumed} {
		if r.Error != nil {
			t.Errorf("%s run: the client raised %q (events %s)", name, *r.Error, r.types())
		}
	}

	fin := got.Paused.Events[len(got.Paused.Events)-1]
	if fin.Type != "RUN_FINISHED" || fin.Outcome == nil || fin.Outcome.Type != "interrupt" || len(fin.Outcome.Interrupts) != 1 ||
		fin.Outcome.Interrupts[0].Reason != "approval" || len(got.Paused.Pending) != 1 {
		t.Fatalf("the first run did not end on an interrupt: %s %+v", got.Paused.types(), fin)
	}
	if !strings.Contains(got.Paused.types(), "TOOL_CALL_START TOOL_CALL_ARGS TOOL_CALL_END") {
		t.Errorf("the paused call was not shown as a tool call: %s", got.Paused.types())
	}

	text, contents := "", 0
	var firstContent int64
	for _, e := range got.Resumed.Events {
		if e.Type == "TEXT_MESSAGE_CONTENT" {
			if contents == 0 {
				firstContent = e.ReceivedAt
			}
			contents++
			text += e.Delta
		}
	}
	last := got.Resumed.Events[len(got.Resumed.Events)-1]
	if last.Type != "RUN_FINISHED" || last.Outcome == nil || last.Outcome.Type != "success" || len(got.Resumed.Pending) != 0 {
		t.Fatalf("the resumed run did not finish: %s", got.Resumed.types())
	}
	if !strings.Contains(got.Resumed.types(), "TOOL_CALL_RESULT") {
		t.Errorf("the approved call's result is missing: %s", got.Resumed.types())
	}
	committed := committedAnswer(t, g)
	if text != committed || !strings.Contains(committed, "final answer for aguinote") {
		t.Errorf("the TEXT_MESSAGE_CONTENT pieces read %q; the committed answer is %q", text, committed)
	}
	model.mu.Lock()
	streamed, written := model.streamed, model.answerFirst
	model.mu.Unlock()
	if streamed > 0 {
		// The gateway streams from the provider: the answer must arrive
		// in pieces.
		if contents < 2 {
			t.Errorf("a streamed answer arrived as %d TEXT_MESSAGE_CONTENT event(s), want several", contents)
		}
		if !written.IsZero() && firstContent > 0 {
			t.Logf("first answer token: written by the model at %d ms, at the client %d ms later", written.UnixMilli(), firstContent-written.UnixMilli())
		}
	} else {
		t.Logf("the gateway did not ask the model to stream: the answer arrived as %d TEXT_MESSAGE_CONTENT event(s)", contents)
	}

	if got.Bad.types() != "RUN_STARTED RUN_ERROR" || got.Bad.Events[1].Code != "unknown_interrupt" {
		t.Errorf("a resume of an unknown interrupt: %s %+v (client error %v)", got.Bad.types(), got.Bad.Events, got.Bad.Error)
	}
}

// committedAnswer is the text of the newest assistant message of alice's
// newest workflow.
func committedAnswer(t *testing.T, g *gateway) string {
	t.Helper()
	var list struct{ Workflows []struct{ ID string } }
	g.expect(t, http.StatusOK, "GET", "/api/v1/workflows?limit=1", gwAlice, nil, &list)
	if len(list.Workflows) != 1 {
		t.Fatalf("alice has no workflow")
	}
	var msgs struct{ Messages []struct{ Role, Text string } }
	g.expect(t, http.StatusOK, "GET", "/api/v1/workflows/"+list.Workflows[0].ID+"/messages", gwAlice, nil, &msgs)
	for i := len(msgs.Messages) - 1; i >= 0; i-- {
		if msgs.Messages[i].Role == "assistant" {
			return msgs.Messages[i].Text
		}
	}
	return ""
}
