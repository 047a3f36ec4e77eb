package llm

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/twostep/twostep/workflow"
)

// handlerTransport answers every request with an http.Handler in-process,
// whatever its host: the Google client has no base URL option.
type handlerTransport struct {
	h    http.Handler
	mu   sync.Mutex
	seen []*http.Request
}

func (ht *handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ht.mu.Lock()
	ht.seen = append(ht.seen, req)
	ht.mu.Unlock()
	rec := httptest.NewRecorder()
	ht.h.ServeHTTP(rec, req)
	return rec.Result(), nil
}

func TestGoogleAIOverREST(t *testing.T) {
	t.Parallel()
	const key = "AIza-MARKER-google-key"
	tests := []struct {
		name     string
		status   int
		body     string
		wantText string
		wantKind workflow.Kind
	}{
		{
			name:   "reply with usage",
			status: http.StatusOK,
			body: `{"candidates":[{"content":{"parts":[{"text":"{\"ok\":true}"}],"role":"model"},"finishReason":1,"index":0}],
				"usageMetadata":{"promptTokenCount":11,"candidatesTokenCount":4,"totalTokenCount":15}}`,
			wantText: `{"ok":true}`,
		},
		{
			name:     "bad request is invalid",
			status:   http.StatusBadRequest,
			body:     `{"error":{"code":400,"message":"API key not valid: ` + key + `","status":"INVALID_ARGUMENT"}}`,
			wantKind: workflow.KindInvalid,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var sentBody map[string]any
			ht := &handlerTransport{h: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_ = json.NewDecoder(r.Body).Decode(&sentBody)
				body := tt.body
				if tt.status == http.StatusOK && strings.HasSuffix(r.URL.Path, ":streamGenerateContent") {
					body = "[" + body + "]" // the REST stream is a JSON array
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte(body))
			})}
			m, err := New(context.Background(), Config{Provider: "googleai", GoogleAPIKey: key, MaxAttempts: 1,
				HTTPClient: &http.Client{Transport: ht}})
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			defer m.Close()
			req := prompt("hi")
			req.JSON = true
			got, err := m.Generate(context.Background(), req)
			if len(ht.seen) != 1 {
				t.Fatalf("requests = %d, want 1", len(ht.seen))
			}
			r := ht.seen[0]
			if r.Header.Get("X-Goog-Api-Key") != key || strings.Contains(r.URL.String(), key) {
				t.Errorf("the key must travel in the header only: url %s, header %q", r.URL, r.Header.Get("X-Goog-Api-Key"))
			}
			if !strings.Contains(r.URL.Path, "/models/gemini-2.0-flash:") {
				t.Errorf("path = %s, want the default model", r.URL.Path)
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
			if got.Text != tt.wantText || got.PromptTokens != 11 || got.CompletionTokens != 4 {
				t.Errorf("Generate = %+v, want %q with usage 11/4", got, tt.wantText)
			}
			gc, _ := sentBody["generationConfig"].(map[string]any)
			if gc["responseMimeType"] != "application/json" {
				t.Errorf("generationConfig = %v, want responseMimeType application/json", sentBody["generationConfig"])
			}
		})
	}
}
