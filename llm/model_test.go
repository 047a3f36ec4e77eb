package llm

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twostep/twostep/workflow"
)

const testKey = "sk-test-key"

func newTestModel(t *testing.T, baseURL string, log *retryLog, mutate func(*Config)) *Model {
	t.Helper()
	cfg := Config{
		Provider:       ProviderOpenAI,
		Model:          "test-model",
		OpenAIBaseURL:  baseURL,
		OpenAIAPIKey:   testKey,
		Timeout:        5 * time.Second,
		RetryBaseDelay: 20 * time.Millisecond,
		MaxRetryDelay:  2 * time.Second,
	}
	if log != nil {
		cfg.OnRetry = log.add
	}
	if mutate != nil {
		mutate(&cfg)
	}
	m, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return m
}

func prompt(text string) workflow.ModelRequest {
	return workflow.ModelRequest{
		Messages: []workflow.PromptMessage{{Role: "system", Content: "You answer in JSON."}, {Role: "user", Content: text}},
		Stage:    workflow.StageOne,
	}
}

func logSchedule(t *testing.T, events []Retry) {
	t.Helper()
	for _, e := range events {
		t.Logf("retry after attempt %d: status %d, waited %v", e.Attempt, e.Status, e.Delay)
	}
}

func TestGenerateSuccessWithUsage(t *testing.T) {
	t.Parallel()
	srv := newFakeOpenAI(t, func(_ int, _ *http.Request, _ chatRequest, w http.ResponseWriter) {
		writeCompletion(w, `{"action":"workflow.complete"}`, 42, 7)
	})
	m := newTestModel(t, srv.url(), nil, nil)
	req := prompt("finish")
	req.JSON = true
	req.MaxTokens = 256
	got, err := m.Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	want := workflow.ModelResponse{Text: `{"action":"workflow.complete"}`, Model: "openai/test-model", PromptTokens: 42, CompletionTokens: 7, StopReason: "stop",
		OutputMode: workflow.OutputJSONObject}
	if got != want {
		t.Errorf("Generate = %+v, want %+v", got, want)
	}
	sent, header := srv.lastRequest()
	if sent.Model != "test-model" || len(sent.Messages) != 2 || sent.Messages[0].Role != "system" || sent.Messages[1].Content != "finish" {
		t.Errorf("request = %+v, want the model and both messages", sent)
	}
	if sent.ResponseFormat == nil || sent.ResponseFormat.Type != "json_object" {
		t.Errorf("response_format = %+v, want json_object for a JSON request", sent.ResponseFormat)
	}
	if sent.MaxTokens != 256 || sent.MaxCompletionTokens != 0 {
		t.Errorf("max_tokens = %d, max_completion_tokens = %d; want the legacy field for a compatible server", sent.MaxTokens, sent.MaxCompletionTokens)
	}
	if got := header.Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("Authorization = %q", got)
	}
}

func TestGenerateEstimatesMissingUsage(t *testing.T) {
	t.Parallel()
	srv := newFakeOpenAI(t, func(_ int, _ *http.Request, _ chatRequest, w http.ResponseWriter) {
		writeCompletion(w, "Hello world", 0, 0)
	})
	m := newTestModel(t, srv.url(), nil, nil)
	req := prompt("Say hello")
	got, err := m.Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	// cl100k: "Hello"+" world"; prompt: 3 + (4+5) + (4+2) for "You answer in JSON." and "Say hello".
	if got.CompletionTokens != 2 || got.PromptTokens != 18 {
		t.Errorf("usage = %d/%d, want 18/2 estimated offline", got.PromptTokens, got.CompletionTokens)
	}
}

func TestGenerateRetries(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		reply      func(n int, w http.ResponseWriter)
		wantHits   int32
		wantKind   workflow.Kind // "" for success
		wantInErr  string
		wantPublic string // workflow.PublicMessage(err), when set
		wantDelays func(t *testing.T, d []Retry)
	}{
		{
			name: "429 with Retry-After then success",
			reply: func(n int, w http.ResponseWriter) {
				if n == 1 {
					w.Header().Set("Retry-After", "1")
					writeError(w, http.StatusTooManyRequests, "Rate limit reached")
					return
				}
				writeCompletion(w, "ok", 5, 1)
			},
			wantHits: 2,
			wantDelays: func(t *testing.T, d []Retry) {
				if len(d) != 1 || d[0].Delay != time.Second || d[0].Status != 429 {
					t.Errorf("retries = %+v, want one wait of exactly the Retry-After (1s) after a 429", d)
				}
			},
		},
		{
			name: "429 without Retry-After then success",
			reply: func(n int, w http.ResponseWriter) {
				if n == 1 {
					writeError(w, http.StatusTooManyRequests, "Rate limit reached")
					return
				}
				writeCompletion(w, "ok", 5, 1)
			},
			wantHits: 2,
			wantDelays: func(t *testing.T, d []Retry) {
				if len(d) != 1 || d[0].Delay < 10*time.Millisecond || d[0].Delay > 20*time.Millisecond {
					t.Errorf("retries = %+v, want one jittered wait in [10ms, 20ms]", d)
				}
			},
		},
		{
			name: "500 three times",
			reply: func(_ int, w http.ResponseWriter) {
				writeError(w, http.StatusInternalServerError, "The server had an error")
			},
			wantHits:  3,
			wantKind:  workflow.KindUnavailable,
			wantInErr: "answered HTTP 500 (gave up after 3 attempts)",
			wantDelays: func(t *testing.T, d []Retry) {
				if len(d) != 2 {
					t.Fatalf("retries = %+v, want 2", d)
				}
				if d[0].Delay < 10*time.Millisecond || d[0].Delay > 20*time.Millisecond ||
					d[1].Delay < 20*time.Millisecond || d[1].Delay > 40*time.Millisecond {
					t.Errorf("delays = %v, %v; want [10,20]ms then [20,40]ms", d[0].Delay, d[1].Delay)
				}
			},
		},
		{
			name:      "400 is not retried",
			reply:     func(_ int, w http.ResponseWriter) { writeError(w, http.StatusBadRequest, "Invalid value for messages") },
			wantHits:  1,
			wantKind:  workflow.KindInvalid,
			wantInErr: "refused the request with HTTP 400",
		},
		{
			name: "404 keeps the provider's reason in the public message",
			reply: func(_ int, w http.ResponseWriter) {
				writeError(w, http.StatusNotFound, "The model `nope` does not exist")
			},
			wantHits:   1,
			wantKind:   workflow.KindInvalid,
			wantInErr:  "refused the request with HTTP 404: The model `nope` does not exist",
			wantPublic: "openai refused the request with HTTP 404: The model `nope` does not exist",
		},
		{
			name: "malformed body is not retried",
			reply: func(_ int, w http.ResponseWriter) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"choices": [ {"message": `))
			},
			wantHits:  1,
			wantKind:  workflow.KindUnavailable,
			wantInErr: "returned a reply that could not be read",
		},
		{
			name: "Retry-After beyond the cap fails at once",
			reply: func(_ int, w http.ResponseWriter) {
				w.Header().Set("Retry-After", "3600")
				writeError(w, 429, "slow down")
			},
			wantHits:  1,
			wantKind:  workflow.KindUnavailable,
			wantInErr: "asked to retry after 1h0m0s",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newFakeOpenAI(t, func(n int, _ *http.Request, _ chatRequest, w http.ResponseWriter) { tt.reply(n, w) })
			log := &retryLog{}
			m := newTestModel(t, srv.url(), log, nil)
			got, err := m.Generate(context.Background(), prompt("hi"))
			logSchedule(t, log.all())
			t.Logf("gaps between requests seen by the server: %v", srv.gaps())
			if hits := srv.hits.Load(); hits != tt.wantHits {
				t.Errorf("server hits = %d, want %d", hits, tt.wantHits)
			}
			if tt.wantKind == "" {
				if err != nil || got.Text != "ok" {
					t.Fatalf("Generate = %+v, %v; want ok", got, err)
				}
				if want := int(tt.wantHits) - 1; got.Retries != want || got.StopReason != "stop" {
					t.Errorf("Retries, StopReason = %d, %q; want %d, stop", got.Retries, got.StopReason, want)
				}
			} else if workflow.KindOf(err) != tt.wantKind || !strings.Contains(err.Error(), tt.wantInErr) {
				t.Errorf("err = %v (kind %s), want kind %s containing %q", err, workflow.KindOf(err), tt.wantKind, tt.wantInErr)
			}
			if tt.wantPublic != "" {
				if got := workflow.PublicMessage(err); got != tt.wantPublic {
					t.Errorf("PublicMessage = %q, want %q", got, tt.wantPublic)
				}
			}
			if tt.wantDelays != nil {
				tt.wantDelays(t, log.all())
			}
		})
	}
}

func TestGenerateTimeout(t *testing.T) {
	t.Parallel()
	srv := newFakeOpenAI(t, func(_ int, r *http.Request, _ chatRequest, w http.ResponseWriter) {
		blockUntilGone(r, 10*time.Second)
	})
	log := &retryLog{}
	m := newTestModel(t, srv.url(), log, func(c *Config) { c.Timeout = 50 * time.Millisecond })
	_, err := m.Generate(context.Background(), prompt("hi"))
	logSchedule(t, log.all())
	if workflow.KindOf(err) != workflow.KindUnavailable || !strings.Contains(err.Error(), "did not answer within 50ms") {
		t.Errorf("err = %v, want KindUnavailable timeout", err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v: a per-attempt timeout must not look like the caller's deadline", err)
	}
	// Three attempts, each cut by the timeout. Under load an attempt can time
	// out before its request reaches the handler, so the server may see fewer.
	if n := len(log.all()); n != 2 {
		t.Errorf("retries = %d, want 2 (3 attempts)", n)
	}
	if hits := srv.hits.Load(); hits > 3 {
		t.Errorf("server hits = %d, want at most 3 attempts", hits)
	}
}

func TestGenerateCancelStopsAtOnce(t *testing.T) {
	t.Parallel()
	arrived := make(chan struct{})
	srv := newFakeOpenAI(t, func(_ int, r *http.Request, _ chatRequest, w http.ResponseWriter) {
		close(arrived)
		blockUntilGone(r, 10*time.Second)
	})
	m := newTestModel(t, srv.url(), nil, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := m.Generate(ctx, prompt("hi"))
		done <- err
	}()
	<-arrived
	cancel()
	var err error
	select {
	case err = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Generate did not return after cancel")
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if hits := srv.hits.Load(); hits != 1 {
		t.Errorf("server hits = %d, want 1: cancellation is never retried", hits)
	}
}

func TestGenerateUnreachableIsRetriedAndUnavailable(t *testing.T) {
	t.Parallel()
	srv := newFakeOpenAI(t, func(int, *http.Request, chatRequest, http.ResponseWriter) {})
	url := srv.url()
	srv.srv.Close()
	log := &retryLog{}
	m := newTestModel(t, url, log, nil)
	_, err := m.Generate(context.Background(), prompt("hi"))
	if workflow.KindOf(err) != workflow.KindUnavailable || !strings.Contains(err.Error(), "could not be reached") {
		t.Errorf("err = %v, want KindUnavailable unreachable", err)
	}
	if n := len(log.all()); n != 2 {
		t.Errorf("retries = %d, want 2", n)
	}
}

func TestGenerateRejectsUnknownRole(t *testing.T) {
	t.Parallel()
	srv := newFakeOpenAI(t, func(int, *http.Request, chatRequest, http.ResponseWriter) {})
	m := newTestModel(t, srv.url(), nil, nil)
	_, err := m.Generate(context.Background(), workflow.ModelRequest{Messages: []workflow.PromptMessage{{Role: "tool", Content: "x"}}})
	if workflow.KindOf(err) != workflow.KindInvalid || srv.hits.Load() != 0 {
		t.Errorf("err = %v, hits = %d; want KindInvalid before any request", err, srv.hits.Load())
	}
}
