package llm

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/twostep/twostep/workflow"
)

// handlerTransport answers every request with an http.Handler in-process,
// whatever its host, and records the requests.
type handlerTransport struct {
	h    http.Handler
	seen []*http.Request
}

func (ht *handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ht.seen = append(ht.seen, req)
	rec := httptest.NewRecorder()
	ht.h.ServeHTTP(rec, req)
	return rec.Result(), nil
}

// Gemini is reached through its OpenAI-compatible endpoint: the default
// base URL, the key as a Bearer token (never in the URL), JSON mode as
// response_format json_object, and the default model.
func TestGoogleAIOverOpenAICompatibleEndpoint(t *testing.T) {
	t.Parallel()
	const key = "AIza-MARKER-google-key"
	tests := []struct {
		name     string
		status   int
		body     string
		wantKind workflow.Kind
	}{
		{name: "reply with usage", status: http.StatusOK,
			body: `{"id":"c","object":"chat.completion","created":1,"model":"gemini-2.0-flash","choices":[{"index":0,"finish_reason":"stop",` +
				`"message":{"role":"assistant","content":"{\"ok\":true}"}}],"usage":{"prompt_tokens":11,"completion_tokens":4,"total_tokens":15}}`},
		{name: "bad request is invalid", status: http.StatusBadRequest,
			body: `[{"error":{"code":400,"message":"API key not valid: ` + key + `","status":"INVALID_ARGUMENT"}}]`, wantKind: workflow.KindInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var sent chatRequest
			ht := &handlerTransport{h: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_ = json.NewDecoder(r.Body).Decode(&sent)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte(tt.body))
			})}
			m, err := New(context.Background(), Config{Provider: "googleai", GoogleAPIKey: key, MaxAttempts: 1,
				HTTPClient: &http.Client{Transport: ht}})
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			defer m.Close()
			req := prompt("hi")
			req.JSON, req.MaxTokens = true, 128
			got, err := m.Generate(context.Background(), req)
			if len(ht.seen) != 1 {
				t.Fatalf("requests = %d, want 1", len(ht.seen))
			}
			r := ht.seen[0]
			if r.URL.String() != "https://generativelanguage.googleapis.com/v1beta/openai/chat/completions" {
				t.Errorf("url = %s, want Gemini's OpenAI-compatible chat endpoint", r.URL)
			}
			if r.Header.Get("Authorization") != "Bearer "+key || strings.Contains(r.URL.String(), key) {
				t.Errorf("the key must travel as a Bearer token only: url %s", r.URL)
			}
			if tt.wantKind != "" {
				if workflow.KindOf(err) != tt.wantKind || strings.Contains(err.Error(), key) {
					t.Errorf("err = %v, want kind %s without the key", err, tt.wantKind)
				}
				return
			}
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			if got.Text != `{"ok":true}` || got.PromptTokens != 11 || got.CompletionTokens != 4 || got.Model != "googleai/gemini-2.0-flash" {
				t.Errorf("Generate = %+v, want the reply with usage 11/4", got)
			}
			if sent.Model != "gemini-2.0-flash" || sent.ResponseFormat == nil || sent.ResponseFormat.Type != "json_object" || sent.MaxTokens != 128 {
				t.Errorf("request = %+v, want the default model, json_object and max_tokens 128", sent)
			}
		})
	}
}
