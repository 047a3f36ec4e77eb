package llm

import (
	"context"
	"net/http"
	"testing"

	"github.com/twostep/twostep/workflow"
)

// Each provider's documented "cut at the token limit" reply is reported as
// Truncated with the provider's stop reason; a normal stop is not.
func TestGenerateReportsTokenLimitStops(t *testing.T) {
	t.Parallel()
	anthropicBody := func(reason string) string {
		return `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[{"type":"text","text":"{\"action\":"}],` +
			`"stop_reason":"` + reason + `","stop_sequence":null,"usage":{"input_tokens":20,"output_tokens":64}}`
	}
	openAIBody := func(reason string) string {
		return `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"` + reason +
			`","message":{"role":"assistant","content":"{\"action\":"}}],"usage":{"prompt_tokens":9,"completion_tokens":32,"total_tokens":41}}`
	}
	tests := []struct {
		name       string
		cfg        Config
		body       string
		wantReason string
		wantCut    bool
	}{
		{"anthropic max_tokens", Config{Provider: ProviderAnthropic, AnthropicAPIKey: "k"}, anthropicBody("max_tokens"), "max_tokens", true},
		{"anthropic end_turn", Config{Provider: ProviderAnthropic, AnthropicAPIKey: "k"}, anthropicBody("end_turn"), "end_turn", false},
		{"gemini length", Config{Provider: ProviderGoogleAI, GoogleAPIKey: "k"}, openAIBody("length"), "length", true},
		{"gemini stop", Config{Provider: ProviderGoogleAI, GoogleAPIKey: "k"}, openAIBody("stop"), "stop", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ht := &handlerTransport{h: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(tt.body))
			})}
			cfg := tt.cfg
			cfg.MaxAttempts, cfg.HTTPClient = 1, &http.Client{Transport: ht}
			m, err := New(context.Background(), cfg)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			defer m.Close()
			got, err := m.Generate(context.Background(), prompt("hi"))
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			if got.StopReason != tt.wantReason || got.Truncated != tt.wantCut {
				t.Errorf("stop reason %q truncated %v, want %q %v", got.StopReason, got.Truncated, tt.wantReason, tt.wantCut)
			}
		})
	}
}

func TestGenerateReportsOpenAILengthFinish(t *testing.T) {
	t.Parallel()
	for _, reason := range []string{"length", "stop"} {
		srv := newFakeOpenAI(t, func(_ int, _ *http.Request, _ chatRequest, w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,` +
				`"finish_reason":"` + reason + `","message":{"role":"assistant","content":"{\"action\":"}}],` +
				`"usage":{"prompt_tokens":9,"completion_tokens":32,"total_tokens":41}}`))
		})
		got, err := newTestModel(t, srv.url(), nil, nil).Generate(context.Background(), prompt("hi"))
		if err != nil {
			t.Fatalf("Generate: %v", err)
		}
		want := workflow.ModelResponse{Text: `{"action":`, Model: "openai/test-model", PromptTokens: 9, CompletionTokens: 32,
			StopReason: reason, Truncated: reason == "length", OutputMode: workflow.OutputText}
		if got != want {
			t.Errorf("finish %s: Generate = %+v, want %+v", reason, got, want)
		}
	}
}
