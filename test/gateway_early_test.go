package test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twostep/twostep/adminv1"
)

// overlapLLM is an OpenAI-compatible server that streams every reply
// (SSE, tool-call argument deltas when the request forces a tool, usage
// in the last chunk). A Stage 1 reply stops after its four Stage 2 keys
// until a Stage 2 request has arrived: the round completes only if the
// gateway starts Stage 2 while Stage 1 still streams (missed marks a
// wait that ran out instead of hanging).
type overlapLLM struct {
	stage2 chan struct{}
	missed atomic.Bool
}

func (m *overlapLLM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		chatRequest
		Stream bool              `json:"stream"`
		Tools  []json.RawMessage `json:"tools"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || !req.Stream {
		http.Error(w, `{"error":{"message":"want a streamed request"}}`, http.StatusBadRequest)
		return
	}
	var prompt strings.Builder
	for _, msg := range req.Messages {
		prompt.WriteString(contentText(msg.Content))
	}
	head, tail := `{"schema": "parameters_v1", "parameters": {"message": "All done, \"streamed\"."}}`, ""
	if strings.Contains(prompt.String(), "You are the planner") {
		head = `{"actionObjective": "answer", "action": "workflow.complete", "parametersContext": "say that all is done",` +
			` "parametersSchema": {"fields": [{"name": "message", "type": "string", "required": true, "description": "the answer"}]}`
		tail = `, "learnings": [], "requiredInputDocuments": []}`
	} else {
		m.stage2 <- struct{}{}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(piece string) {
		delta := map[string]any{"content": piece}
		if len(req.Tools) > 0 {
			delta = map[string]any{"tool_calls": []map[string]any{{"index": 0, "function": map[string]any{"arguments": piece}}}}
		}
		b, _ := json.Marshal(map[string]any{"choices": []map[string]any{{"index": 0, "delta": delta}}})
		fmt.Fprintf(w, "data: %s\n\n", b)
		w.(http.Flusher).Flush()
	}
	if len(req.Tools) > 0 {
		var tool struct {
			Function struct{ Name string } `json:"function"`
		}
		_ = json.Unmarshal(req.Tools[0], &tool)
		b, _ := json.Marshal(map[string]any{"choices": []map[string]any{{"index": 0, "delta": map[string]any{"role": "assistant",
			"tool_calls": []map[string]any{{"index": 0, "id": "call_1", "type": "function", "function": map[string]any{"name": tool.Function.Name, "arguments": ""}}}}}}})
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	for i := 0; i < len(head); i += 7 {
		chunk(head[i:min(i+7, len(head))])
	}
	if tail != "" {
		select {
		case <-m.stage2:
		case <-time.After(10 * time.Second):
			m.missed.Store(true)
		}
		chunk(tail)
	}
	fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\n")
	fmt.Fprint(w, `data: {"choices":[],"usage":{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120,"prompt_tokens_details":{"cached_tokens":64}}}`+"\n\ndata: [DONE]\n\n")
}

// TestGatewayStartsStage2WhileStage1Streams runs the gateway binary
// against a provider that streams: Stage 2 is asked before Stage 1's
// reply has ended, the answer is Stage 2's, and the traces show the
// overlap and the usage read from the stream.
func TestGatewayStartsStage2WhileStage1Streams(t *testing.T) {
	t.Parallel()
	model := &overlapLLM{stage2: make(chan struct{}, 1)}
	llmSrv := httptest.NewServer(model)
	t.Cleanup(llmSrv.Close)
	g := startGateway(t, nil, "OPENAI_BASE_URL="+llmSrv.URL+"/v1")
	var wf wfView
	g.expect(t, http.StatusCreated, "POST", "/api/v1/workflows", gwAlice, map[string]any{"prompt": "are we done?"}, &wf)
	done := g.waitDone(t, gwAlice, wf.ID)
	if model.missed.Load() {
		t.Fatalf("Stage 2 was not asked before Stage 1's reply ended\n%s", g.stderr.String())
	}
	if done.Status != "completed" {
		t.Fatalf("workflow ended %s (%s)", done.Status, done.Error)
	}
	msgs := g.messages(t, gwAlice, wf.ID)
	if last := msgs[len(msgs)-1]; last.Text != `All done, "streamed".` {
		t.Errorf("the answer is %q", last.Text)
	}
	var traces adminv1.TraceList
	g.expect(t, http.StatusOK, "GET", "/admin/v1/workflows/"+wf.ID+"/traces", gwAdmin, nil, &traces)
	var stages []string
	for _, tr := range traces.Traces {
		stages = append(stages, tr.Stage)
		if tr.Discarded || tr.PromptTokens != 100 || tr.CachedTokens != 64 || tr.FinishReason != "stop" {
			t.Errorf("trace %s: discarded %v, usage %d (%d cached), finish %q; want kept, the stream's usage", tr.Stage, tr.Discarded,
				tr.PromptTokens, tr.CachedTokens, tr.FinishReason)
		}
	}
	if strings.Join(stages, ",") != "stage1,stage2" {
		t.Errorf("traces %v, want stage1 then stage2", stages)
	}
}
