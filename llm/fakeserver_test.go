package llm

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// chatRequest is the part of an OpenAI chat request the tests inspect.
type chatRequest struct {
	Model          string `json:"model"`
	Messages       []struct{ Role, Content string }
	ResponseFormat *struct {
		Type string `json:"type"`
	} `json:"response_format"`
	MaxTokens           int      `json:"max_tokens"`
	MaxCompletionTokens int      `json:"max_completion_tokens"`
	Temperature         *float64 `json:"temperature"`
}

// fakeOpenAI is an OpenAI-compatible chat server for tests. Each request is
// answered by reply(n, req, w) where n counts requests from 1.
type fakeOpenAI struct {
	srv   *httptest.Server
	hits  atomic.Int32
	reply func(n int, r *http.Request, req chatRequest, w http.ResponseWriter)

	mu       sync.Mutex
	requests []chatRequest
	headers  []http.Header
	arrivals []time.Time
}

func newFakeOpenAI(t testing.TB, reply func(n int, r *http.Request, req chatRequest, w http.ResponseWriter)) *fakeOpenAI {
	t.Helper()
	f := &fakeOpenAI{reply: reply}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeOpenAI) serve(w http.ResponseWriter, r *http.Request) {
	n := int(f.hits.Add(1))
	f.mu.Lock()
	f.arrivals = append(f.arrivals, time.Now())
	f.mu.Unlock()
	if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
		http.Error(w, `{"error":{"message":"no such route"}}`, http.StatusNotFound)
		return
	}
	var req chatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.requests = append(f.requests, req)
	f.headers = append(f.headers, r.Header.Clone())
	f.mu.Unlock()
	f.reply(n, r, req, w)
}

// gaps returns the time between consecutive requests: the retry schedule
// as the server saw it.
func (f *fakeOpenAI) gaps() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []time.Duration
	for i := 1; i < len(f.arrivals); i++ {
		out = append(out, f.arrivals[i].Sub(f.arrivals[i-1]).Round(100*time.Microsecond))
	}
	return out
}

func (f *fakeOpenAI) url() string { return f.srv.URL + "/v1" }

func (f *fakeOpenAI) lastRequest() (chatRequest, http.Header) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[len(f.requests)-1], f.headers[len(f.headers)-1]
}

// writeCompletion answers with one choice and, when prompt+completion > 0,
// a usage block.
func writeCompletion(w http.ResponseWriter, content string, prompt, completion int) {
	resp := map[string]any{
		"id": "chatcmpl-test", "object": "chat.completion", "created": 1, "model": "test-model",
		"choices": []map[string]any{{
			"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": content},
		}},
	}
	if prompt+completion > 0 {
		resp["usage"] = map[string]any{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":{"message":%q,"type":"test"}}`, msg)
}

// blockUntilGone holds a request until the client goes away or the limit
// passes, so tests can stop their servers.
func blockUntilGone(r *http.Request, limit time.Duration) {
	select {
	case <-r.Context().Done():
	case <-time.After(limit):
	}
}

// retryLog collects the Retry events of a Model, for assertions and for the
// observed schedule the task asks to report.
type retryLog struct {
	mu     sync.Mutex
	events []Retry
}

func (l *retryLog) add(r Retry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, r)
}

func (l *retryLog) all() []Retry {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Retry(nil), l.events...)
}
