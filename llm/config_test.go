package llm

import (
	"context"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twostep/twostep/workflow"
)

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  Config
		want []string // substrings of the error; nil for valid
	}{
		{"openai with key", Config{Provider: "openai", OpenAIAPIKey: "k"}, nil},
		{"derived openai", Config{OpenAIAPIKey: "k"}, nil},
		{"derived ollama", Config{}, nil},
		{"compatible server without key", Config{Provider: "openai", OpenAIBaseURL: "http://localhost:8000/v1", Model: "qwen"}, nil},
		{"openai missing key", Config{Provider: "openai"}, []string{"OPENAI_API_KEY is required"}},
		{"compatible server needs a model", Config{Provider: "openai", OpenAIBaseURL: "http://localhost:8000/v1"}, []string{"LLM_MODEL is required"}},
		{"bad base URL", Config{Provider: "openai", OpenAIAPIKey: "k", OpenAIBaseURL: "localhost:8000", Model: "m"}, []string{"OPENAI_BASE_URL is not a valid"}},
		{"anthropic missing key", Config{Provider: "anthropic"}, []string{"ANTHROPIC_API_KEY is required"}},
		{"googleai missing key", Config{Provider: "GoogleAI"}, []string{"GOOGLE_API_KEY is required"}},
		{"bad ollama URL", Config{Provider: "ollama", OllamaBaseURL: "http://[::1"}, []string{"OLLAMA_BASE_URL"}},
		{"scripted", Config{Provider: "scripted"}, nil},
		{"every problem at once", Config{Provider: "nope", Timeout: -1, MaxAttempts: -1, MaxInFlight: -1},
			[]string{"LLM_PROVIDER must be one of", "timeout", "attempts", "in-flight"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.cfg.Validate()
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			if workflow.KindOf(err) != workflow.KindInvalid {
				t.Fatalf("Validate = %v, want KindInvalid", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate = %q, want it to mention %q", err, w)
				}
			}
		})
	}
}

func TestNewNamesAndDefaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cfg  Config
		name string
	}{
		{Config{OpenAIAPIKey: "k"}, "openai/gpt-4o-mini"},
		{Config{}, "ollama/llama3.1"},
		{Config{Provider: "anthropic", AnthropicAPIKey: "k"}, "anthropic/claude-sonnet-4-0"},
		{Config{Provider: "googleai", GoogleAPIKey: "k"}, "googleai/gemini-2.0-flash"},
		{Config{Provider: "ollama", Model: "qwen2.5:7b"}, "ollama/qwen2.5:7b"},
		{Config{OpenAIBaseURL: "http://127.0.0.1:9/v1", Model: "foo"}, "openai/foo"},
		{Config{AnthropicAPIKey: "k"}, "anthropic/claude-sonnet-4-0"},
		{Config{GoogleAPIKey: "k"}, "googleai/gemini-2.0-flash"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := tt.cfg
			rt := &handlerTransport{h: http.NotFoundHandler()}
			cfg.HTTPClient = &http.Client{Transport: rt}
			m, err := New(context.Background(), cfg)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			defer m.Close()
			if len(rt.seen) != 0 {
				t.Errorf("New sent %d requests, want none", len(rt.seen))
			}
			if got := m.Name(); got != tt.name {
				t.Errorf("Name = %q, want %q", got, tt.name)
			}
			if m.timeout != 120*time.Second || m.maxAttempts != 3 || cap(m.slots) != 16 {
				t.Errorf("defaults = %v/%d/%d, want 120s/3/16", m.timeout, m.maxAttempts, cap(m.slots))
			}
		})
	}
}

func TestNewRefusesScriptedAndMissingKeys(t *testing.T) {
	t.Parallel()
	_, err := New(context.Background(), Config{Provider: "scripted"})
	if workflow.KindOf(err) != workflow.KindInvalid || !strings.Contains(err.Error(), "scripted.New") {
		t.Errorf("New(scripted) = %v, want a KindInvalid error pointing at scripted.New", err)
	}
	_, err = New(context.Background(), Config{Provider: "anthropic"})
	if workflow.KindOf(err) != workflow.KindInvalid || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Errorf("New(anthropic without key) = %v, want a clear startup error", err)
	}
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	maxRnd := func(n int64) int64 { return n - 1 }
	zeroRnd := func(int64) int64 { return 0 }
	tests := []struct {
		name       string
		attempt    int
		retryAfter time.Duration
		rnd        func(int64) int64
		want       time.Duration
		wantOK     bool
	}{
		{"first retry, low jitter", 1, 0, zeroRnd, 250 * time.Millisecond, true},
		{"first retry, high jitter", 1, 0, maxRnd, 500 * time.Millisecond, true},
		{"second retry doubles", 2, 0, maxRnd, time.Second, true},
		{"capped", 10, 0, maxRnd, 4 * time.Second, true},
		{"huge attempt does not overflow", 80, 0, maxRnd, 4 * time.Second, true},
		{"Retry-After wins", 1, 3 * time.Second, maxRnd, 3 * time.Second, true},
		{"Retry-After beyond the cap", 1, time.Minute, maxRnd, time.Minute, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := backoff(tt.attempt, 500*time.Millisecond, 4*time.Second, tt.retryAfter, tt.rnd)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("backoff = %v, %v; want %v, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"7", 7 * time.Second},
		{"0", 0},
		{"-3", 0},
		{"soon", 0},
		{now.Add(90 * time.Second).Format(timeFormatHTTP), 90 * time.Second},
		{now.Add(-time.Hour).Format(timeFormatHTTP), 0},
		// Past what a Duration holds: the longest wait, never a wrapped
		// (negative or tiny) one that would retry at once.
		{"9999999999", math.MaxInt64},
		{"9223372036854775807", math.MaxInt64},
		{"99999999999999999999", math.MaxInt64},
	}
	for _, tt := range tests {
		if got := parseRetryAfter(tt.in, now); got != tt.want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

const timeFormatHTTP = "Mon, 02 Jan 2006 15:04:05 GMT"

// TestSelectedProviderAndUnusedSettings: with no LLM_PROVIDER, a provider's
// setting selects it (a base URL alone is enough for openai), and settings
// no provider in use reads are named, by variable and never by value.
func TestSelectedProviderAndUnusedSettings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cfg    Config
		inUse  []string
		want   string
		unused string
	}{
		{Config{OpenAIBaseURL: "http://x/v1"}, nil, "openai", ""},
		{Config{OpenAIAPIKey: "k", AnthropicAPIKey: "a"}, []string{"openai"}, "openai", "ANTHROPIC_API_KEY"},
		{Config{OpenAIAPIKey: "k", AnthropicAPIKey: "a"}, []string{"openai", "anthropic"}, "openai", ""},
		{Config{Provider: "ollama", OpenAIBaseURL: "http://x/v1"}, []string{"ollama"}, "ollama", "OPENAI_BASE_URL"},
		{Config{Provider: " Anthropic ", AnthropicAPIKey: "a", GoogleAPIKey: "g", OllamaBaseURL: "http://o"}, []string{"anthropic"},
			"anthropic", "GOOGLE_API_KEY,OLLAMA_BASE_URL"},
		{Config{GoogleAPIKey: "g"}, []string{"googleai"}, "googleai", ""},
		{Config{}, []string{"ollama"}, "ollama", ""},
	}
	for _, tt := range tests {
		if got := tt.cfg.SelectedProvider(); got != tt.want {
			t.Errorf("%+v: SelectedProvider = %q, want %q", tt.cfg, got, tt.want)
		}
		if got := strings.Join(tt.cfg.UnusedSettings(tt.inUse...), ","); got != tt.unused {
			t.Errorf("%+v: UnusedSettings(%v) = %q, want %q", tt.cfg, tt.inUse, got, tt.unused)
		}
	}
}
