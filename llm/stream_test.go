package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twostep/twostep/workflow"
)

// sse writes a streamed reply: each event is flushed on its own, and
// after the first the server waits until the client has handed the
// first piece to the request's Stream (gate), which proves the pieces
// reach the caller while the reply is still streaming.
func sse(w http.ResponseWriter, gate *pieces, events ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	f := w.(http.Flusher)
	for i, e := range events {
		fmt.Fprintf(w, "%s\n\n", e)
		f.Flush()
		if i == 1 {
			gate.await()
		}
	}
}

// await waits for the client's first piece; a client that hands none
// over while the reply streams fails the test (missed) instead of
// hanging it.
func (p *pieces) await() {
	select {
	case <-p.first:
	case <-time.After(10 * time.Second):
		p.missed.Store(true)
	}
}

// pieces collects a request's streamed pieces and closes first when the
// first arrives.
type pieces struct {
	missed atomic.Bool
	mu     sync.Mutex
	got    []string
	first  chan struct{}
}

func newPieces() *pieces { return &pieces{first: make(chan struct{})} }

func (p *pieces) add(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.got) == 0 {
		close(p.first)
	}
	p.got = append(p.got, s)
}

func (p *pieces) all() []string {
	if p.missed.Load() {
		panic("a streamed reply's first piece did not reach Stream while the reply was streaming")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.got...)
}

func streamedRequest(p *pieces) workflow.ModelRequest {
	req := prompt("go")
	req.Stream = p.add
	return req
}

func TestOpenAICompatibleStreamsContentWithUsage(t *testing.T) {
	t.Parallel()
	got := newPieces()
	srv := newWireServer(t, "/v1/chat/completions", func(_ int, body map[string]json.RawMessage, w http.ResponseWriter) {
		if string(body["stream"]) != "true" || !strings.Contains(string(body["stream_options"]), `"include_usage":true`) {
			writeError(w, http.StatusBadRequest, "not streamed: "+string(body["stream_options"]))
			return
		}
		sse(w, got,
			`data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`,
			`data: {"choices":[{"index":0,"delta":{"content":"{\"actionObjective\": \"Gr"}}]}`,
			`data: {"choices":[{"index":0,"delta":{"content":"eet\"}"}}]}`,
			`data: {"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}`,
			`data: {"choices":[],"usage":{"prompt_tokens":900,"completion_tokens":7,"total_tokens":907,"prompt_tokens_details":{"cached_tokens":512}}}`,
			`data: [DONE]`)
	})
	m := newTestModel(t, srv.srv.URL+"/v1", nil, nil)
	resp, err := m.Generate(context.Background(), streamedRequest(got))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got.all(), "") != resp.Text || resp.Text != `{"actionObjective": "Greet"}` || len(got.all()) != 2 {
		t.Errorf("pieces %q, text %q", got.all(), resp.Text)
	}
	if resp.PromptTokens != 900 || resp.CompletionTokens != 7 || resp.CachedTokens != 512 {
		t.Errorf("usage %d/%d cached %d, want 900/7 cached 512 from the stream", resp.PromptTokens, resp.CompletionTokens, resp.CachedTokens)
	}
	if resp.StopReason != "length" || !resp.Truncated {
		t.Errorf("stop reason %q truncated %v, want length from the stream", resp.StopReason, resp.Truncated)
	}
}

func TestOpenAICompatibleStreamsToolCallArguments(t *testing.T) {
	t.Parallel()
	got := newPieces()
	srv := newWireServer(t, "/v1/chat/completions", func(_ int, _ map[string]json.RawMessage, w http.ResponseWriter) {
		sse(w, got,
			`data: {"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"select_action","arguments":""}}]}}]}`,
			`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"act"}}]}}]}`,
			`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ion\":\"x\"}"}}]}}]}`,
			`data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
			`data: {"choices":[],"usage":{"prompt_tokens":40,"completion_tokens":9,"total_tokens":49}}`,
			`data: [DONE]`)
	})
	m := newTestModel(t, srv.srv.URL+"/v1", nil, nil)
	req := streamedRequest(got)
	req.JSON, req.Output, req.OutputMode = true, strictSchema, workflow.OutputTool
	resp, err := m.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.OutputMode != workflow.OutputTool || resp.Text != `{"action":"x"}` || strings.Join(got.all(), "") != resp.Text {
		t.Errorf("mode %q text %q pieces %q, want the tool's arguments streamed", resp.OutputMode, resp.Text, got.all())
	}
	if resp.PromptTokens != 40 || resp.CompletionTokens != 9 || resp.StopReason != "tool_calls" {
		t.Errorf("usage %d/%d stop %q", resp.PromptTokens, resp.CompletionTokens, resp.StopReason)
	}
}

// Gemini's OpenAI-compatible endpoint sends a tool call whole in one
// chunk and its usage on the last chunk, beside the finish reason.
func TestGeminiStreamsItsWay(t *testing.T) {
	t.Parallel()
	got := newPieces()
	srv := newWireServer(t, "/v1beta/openai/chat/completions", func(_ int, _ map[string]json.RawMessage, w http.ResponseWriter) {
		sse(w, got,
			`data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"{\"action\":"}}],"model":"gemini"}`,
			`data: {"choices":[{"index":0,"delta":{"content":" \"y\"}"}}],"model":"gemini"}`,
			`data: {"choices":[{"index":0,"delta":{"role":"assistant"},"finish_reason":"stop"}],"usage":{"prompt_tokens":300,"completion_tokens":5,"total_tokens":305,"prompt_tokens_details":{"cached_tokens":256}}}`,
			`data: [DONE]`)
	})
	m, err := New(context.Background(), Config{Provider: ProviderGoogleAI, Model: "gemini", GoogleAPIKey: "k",
		GeminiBaseURL: srv.srv.URL + "/v1beta/openai", MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.Generate(context.Background(), streamedRequest(got))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != `{"action": "y"}` || strings.Join(got.all(), "") != resp.Text {
		t.Errorf("text %q pieces %q", resp.Text, got.all())
	}
	if resp.PromptTokens != 300 || resp.CachedTokens != 256 || resp.CompletionTokens != 5 || resp.StopReason != "stop" {
		t.Errorf("usage %d (%d cached)/%d stop %q", resp.PromptTokens, resp.CachedTokens, resp.CompletionTokens, resp.StopReason)
	}
}

func anthropicStream(gate *pieces, w http.ResponseWriter, block string, deltas ...string) {
	events := []string{
		`event: message_start` + "\n" + `data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","usage":{"input_tokens":50,"cache_read_input_tokens":1800,"cache_creation_input_tokens":200,"output_tokens":1}}}`,
		`event: content_block_start` + "\n" + `data: {"type":"content_block_start","index":0,"content_block":` + block + `}`,
	}
	for _, d := range deltas {
		events = append(events, `event: content_block_delta`+"\n"+`data: {"type":"content_block_delta","index":0,"delta":`+d+`}`)
	}
	events = append(events,
		`event: ping`+"\n"+`data: {"type":"ping"}`,
		`event: content_block_stop`+"\n"+`data: {"type":"content_block_stop","index":0}`,
		`event: message_delta`+"\n"+`data: {"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":35}}`,
		`event: message_stop`+"\n"+`data: {"type":"message_stop"}`)
	// The gate waits after the first delta.
	w.Header().Set("Content-Type", "text/event-stream")
	f := w.(http.Flusher)
	for i, e := range events {
		fmt.Fprintf(w, "%s\n\n", e)
		f.Flush()
		if i == 2 {
			gate.await()
		}
	}
}

func TestAnthropicStreamsTextAndToolInput(t *testing.T) {
	t.Parallel()
	for _, tool := range []bool{false, true} {
		t.Run(fmt.Sprintf("tool=%v", tool), func(t *testing.T) {
			t.Parallel()
			got := newPieces()
			srv := newWireServer(t, "/v1/messages", func(_ int, body map[string]json.RawMessage, w http.ResponseWriter) {
				if string(body["stream"]) != "true" {
					writeError(w, http.StatusBadRequest, "not streamed")
					return
				}
				if tool {
					anthropicStream(got, w, `{"type":"tool_use","id":"tu_1","name":"select_action","input":{}}`,
						`{"type":"input_json_delta","partial_json":"{\"action\""}`, `{"type":"input_json_delta","partial_json":": \"x\"}"}`)
					return
				}
				anthropicStream(got, w, `{"type":"text","text":""}`,
					`{"type":"text_delta","text":"{\"action\""}`, `{"type":"text_delta","text":": \"x\"}"}`)
			})
			m, err := New(context.Background(), Config{Provider: ProviderAnthropic, Model: "claude-test", AnthropicAPIKey: "k",
				AnthropicBaseURL: srv.srv.URL + "/v1", MaxAttempts: 1})
			if err != nil {
				t.Fatal(err)
			}
			req := streamedRequest(got)
			if tool {
				req.JSON, req.Output, req.OutputMode = true, strictSchema, workflow.OutputTool
			}
			resp, err := m.Generate(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			var a, b any
			_ = json.Unmarshal([]byte(resp.Text), &a)
			_ = json.Unmarshal([]byte(strings.Join(got.all(), "")), &b)
			if fmt.Sprint(a) != "map[action:x]" || fmt.Sprint(a) != fmt.Sprint(b) || len(got.all()) != 2 {
				t.Errorf("text %q pieces %q", resp.Text, got.all())
			}
			if resp.PromptTokens != 2050 || resp.CachedTokens != 1800 || resp.CacheWriteTokens != 200 || resp.CompletionTokens != 35 {
				t.Errorf("usage %d (%d read, %d written)/%d, want 2050 (1800, 200)/35", resp.PromptTokens, resp.CachedTokens, resp.CacheWriteTokens, resp.CompletionTokens)
			}
			if resp.StopReason != "max_tokens" || !resp.Truncated {
				t.Errorf("stop %q truncated %v", resp.StopReason, resp.Truncated)
			}
		})
	}
}

// A server that ignores "stream" answers whole: the reply, its usage and
// its finish reason are read as from a stream, in one request, and the
// reply is handed to Stream in one piece.
func TestServerThatCannotStreamStillAnswers(t *testing.T) {
	t.Parallel()
	t.Run("openai-compatible", func(t *testing.T) {
		got := newPieces()
		srv := newWireServer(t, "/v1/chat/completions", openAICachedReply)
		m := newTestModel(t, srv.srv.URL+"/v1", nil, nil)
		resp, err := m.Generate(context.Background(), streamedRequest(got))
		if err != nil {
			t.Fatal(err)
		}
		if len(srv.bodies()) != 1 || resp.Text == "" || strings.Join(got.all(), "") != resp.Text {
			t.Errorf("%d requests, text %q, pieces %q", len(srv.bodies()), resp.Text, got.all())
		}
		if resp.PromptTokens != 2006 || resp.CachedTokens != 1920 || resp.CompletionTokens != 300 {
			t.Errorf("usage %d (%d cached)/%d", resp.PromptTokens, resp.CachedTokens, resp.CompletionTokens)
		}
	})
	t.Run("anthropic", func(t *testing.T) {
		got := newPieces()
		srv := newWireServer(t, "/v1/messages", anthropicCachedReply)
		m, err := New(context.Background(), Config{Provider: ProviderAnthropic, Model: "claude-test", AnthropicAPIKey: "k",
			AnthropicBaseURL: srv.srv.URL + "/v1", MaxAttempts: 1})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := m.Generate(context.Background(), streamedRequest(got))
		if err != nil {
			t.Fatal(err)
		}
		if len(srv.bodies()) != 1 || resp.Text != "ok" || strings.Join(got.all(), "") != "ok" || resp.StopReason != "end_turn" {
			t.Errorf("%d requests, text %q, pieces %q stop %q", len(srv.bodies()), resp.Text, got.all(), resp.StopReason)
		}
		if resp.PromptTokens != 2050 || resp.CachedTokens != 1800 || resp.CompletionTokens != 35 {
			t.Errorf("usage %d (%d cached)/%d", resp.PromptTokens, resp.CachedTokens, resp.CompletionTokens)
		}
	})
}

// A server that refuses the streamed request is asked once more
// unstreamed, and the model's later calls are sent unstreamed.
func TestServerThatRefusesStreamingIsCalledUnstreamed(t *testing.T) {
	t.Parallel()
	srv := newWireServer(t, "/v1/chat/completions", func(_ int, body map[string]json.RawMessage, w http.ResponseWriter) {
		if _, ok := body["stream_options"]; ok {
			writeError(w, http.StatusBadRequest, "unknown field stream_options")
			return
		}
		writeCompletion(w, `{"a":1}`, 5, 2)
	})
	m := newTestModel(t, srv.srv.URL+"/v1", nil, nil)
	for i := range 2 {
		got := newPieces()
		resp, err := m.Generate(context.Background(), streamedRequest(got))
		if err != nil || resp.Text != `{"a":1}` {
			t.Fatalf("call %d: %q, %v", i, resp.Text, err)
		}
		if len(got.all()) != 0 {
			t.Errorf("call %d streamed %q from an unstreamed reply", i, got.all())
		}
	}
	if n := len(srv.bodies()); n != 3 {
		t.Errorf("%d requests, want 3 (refused, resent, then unstreamed)", n)
	}
}

// Ollama is reached through its OpenAI-compatible /v1, streamed the same
// way (its chunks carry no usage unless asked; the request asks).
func TestOllamaStreams(t *testing.T) {
	t.Parallel()
	got := newPieces()
	srv := newWireServer(t, "/v1/chat/completions", func(_ int, body map[string]json.RawMessage, w http.ResponseWriter) {
		if string(body["stream"]) != "true" {
			writeError(w, http.StatusBadRequest, "not streamed")
			return
		}
		sse(w, got,
			`data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"{\"a\""}}]}`,
			`data: {"choices":[{"index":0,"delta":{"content":": 1}"}}]}`,
			`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
			`data: {"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":4,"total_tokens":16}}`,
			`data: [DONE]`)
	})
	m, err := New(context.Background(), Config{Provider: ProviderOllama, Model: "qwen", OllamaBaseURL: srv.srv.URL, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.Generate(context.Background(), streamedRequest(got))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != `{"a": 1}` || strings.Join(got.all(), "") != resp.Text || resp.PromptTokens != 12 || resp.CompletionTokens != 4 {
		t.Errorf("text %q pieces %q usage %d/%d", resp.Text, got.all(), resp.PromptTokens, resp.CompletionTokens)
	}
}
