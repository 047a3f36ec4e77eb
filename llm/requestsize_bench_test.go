package llm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/workflow"
)

// tenStepScript is the scripted 10-step round of the React benchmarks:
// nine echoes, then complete; replies alternate Stage 1, Stage 2.
func tenStepScript() []string {
	var out []string
	for i := range 9 {
		out = append(out, enginetest.Echoes(fmt.Sprintf("result of step %d with some text to summarise", i+1))...)
	}
	return append(out, enginetest.Completes("all ten steps done")...)
}

// sizeServer answers the script in the provider's shape for the mode and
// records each request body's size by stage (even requests are Stage 1).
type sizeServer struct {
	mu     sync.Mutex
	n      int
	bodies [2][]string
}

func (s *sizeServer) handler(script []string, tool bool, anthropic bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		i := s.n
		s.n++
		s.bodies[i%2] = append(s.bodies[i%2], string(raw))
		s.mu.Unlock()
		reply := script[i%len(script)]
		name := map[int]string{0: "select_action", 1: "fill_parameters"}[i%2]
		switch {
		case anthropic && tool:
			anthropicToolUse(w, name, reply)
		case anthropic:
			writeJSON(w, map[string]any{"id": "m", "type": "message", "role": "assistant", "model": "c",
				"content": []any{map[string]any{"type": "text", "text": reply}}, "stop_reason": "end_turn",
				"usage": map[string]any{"input_tokens": 1, "output_tokens": 1}})
		case tool:
			openAIToolCall(w, name, reply)
		default:
			openAIContent(w, name, reply)
		}
	}
}

// BenchmarkStageRequestSize runs the scripted 10-step round through the
// real adapter, the React mode and the engine for each provider and output
// mode, and reports the mean request body of Stage 1 and Stage 2 in bytes
// and in cl100k tokens (an estimate of what the provider bills: the
// prompt plus the tool or schema definition).
func BenchmarkStageRequestSize(b *testing.B) {
	for _, tt := range []struct {
		provider string
		mode     workflow.OutputMode
	}{
		{"openai", workflow.OutputTool}, {"openai", workflow.OutputJSONSchema}, {"openai", workflow.OutputJSONObject},
		{"openai", workflow.OutputText}, {"anthropic", workflow.OutputTool}, {"anthropic", workflow.OutputText},
	} {
		b.Run(tt.provider+"/"+string(tt.mode), func(b *testing.B) {
			srv := &sizeServer{}
			anthropic := tt.provider == "anthropic"
			hs := httptest.NewServer(srv.handler(tenStepScript(), tt.mode == workflow.OutputTool, anthropic))
			b.Cleanup(hs.Close)
			cfg := llm.Config{Provider: "openai", Model: "bench", OpenAIBaseURL: hs.URL + "/v1", OutputMode: tt.mode}
			if anthropic {
				cfg = llm.Config{Provider: "anthropic", Model: "bench", AnthropicAPIKey: "anthropic-bench-key", AnthropicBaseURL: hs.URL, OutputMode: tt.mode}
			}
			model, err := llm.New(context.Background(), cfg)
			if err != nil {
				b.Fatal(err)
			}
			e := startEngine(b, memstore.New(), model, enginetest.NewRegistry())
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				wf, err := e.Create(ctx, engine.NewWorkflow{UserID: "alice", Prompt: "run ten steps", MaxSteps: 10})
				if err != nil {
					b.Fatal(err)
				}
				if got, err := e.Wait(ctx, wf.ID); err != nil || got.Status != workflow.StatusCompleted {
					b.Fatalf("round ended %+v, %v", got, err)
				}
			}
			b.StopTimer()
			var tk llm.Tokenizer
			for stage, bodies := range srv.bodies {
				bytes, tokens := 0, 0
				for _, body := range bodies {
					bytes += len(body)
					tokens += tk.Count(body)
				}
				n := float64(len(bodies))
				b.ReportMetric(float64(bytes)/n, fmt.Sprintf("s%d-bytes/req", stage+1))
				b.ReportMetric(float64(tokens)/n, fmt.Sprintf("s%d-tokens/req", stage+1))
			}
			b.ReportMetric(float64(schemaBytes(srv.bodies[0][0])), "s1-schema-bytes")
			b.ReportMetric(float64(schemaBytes(srv.bodies[1][0])), "s2-schema-bytes")
		})
	}
}

// schemaBytes is the size of what a request adds for its output mode: the
// tools, tool_choice and response_format members.
func schemaBytes(body string) int {
	var m map[string]json.RawMessage
	_ = json.Unmarshal([]byte(body), &m)
	return len(m["tools"]) + len(m["tool_choice"]) + len(m["response_format"])
}
