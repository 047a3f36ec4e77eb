package llm

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twostep/twostep/workflow"
)

// TestProbe: each provider's models listing is requested at its documented
// path with its credentials; a listed model is fine, an unlisted one, an
// error status (with the provider's reason) and an unreachable server are
// unavailable, and no message quotes the key.
func TestProbe(t *testing.T) {
	t.Parallel()
	const key = "sk-PROBE-secret-key"
	tests := []struct {
		name     string
		cfg      Config
		path     string
		header   string // header that must carry the key ("" for none)
		status   int
		body     string
		wantErr  string // "" for nil
		netError bool
	}{
		{name: "openai lists the model", cfg: Config{Provider: "openai", OpenAIAPIKey: key, Model: "gpt-x"},
			path: "/v1/models", header: "Authorization", status: 200, body: `{"data":[{"id":"other"},{"id":"gpt-x"}]}`},
		{name: "openai-compatible lacks the model", cfg: Config{Provider: "openai", OpenAIBaseURL: "http://llm.test/v1", Model: "foo"},
			path: "/v1/models", status: 200, body: `{"data":[{"id":"bar"}]}`, wantErr: `openai/foo: the provider does not list model "foo" (it lists 1 models)`},
		{name: "openai wrong key", cfg: Config{Provider: "openai", OpenAIAPIKey: key, Model: "gpt-x"},
			path: "/v1/models", header: "Authorization", status: 401, body: `{"error":{"message":"Incorrect API key provided: ` + key + `"}}`,
			wantErr: "openai/gpt-x: the models listing answered HTTP 401: Incorrect API key provided: [redacted]"},
		{name: "gemini prefixes model ids", cfg: Config{Provider: "googleai", GoogleAPIKey: key, Model: "gemini-2.0-flash"},
			path: "/v1beta/openai/models", header: "Authorization", status: 200, body: `{"data":[{"id":"models/gemini-2.0-flash"}]}`},
		{name: "anthropic listing authenticates", cfg: Config{Provider: "anthropic", AnthropicAPIKey: key},
			path: "/v1/models", header: "X-Api-Key", status: 200, body: `{"data":[{"id":"claude-sonnet-4-20250514"}]}`},
		{name: "ollama tag implied", cfg: Config{Provider: "ollama", OllamaBaseURL: "http://ollama.test:11434", Model: "llama3.1"},
			path: "/api/tags", status: 200, body: `{"models":[{"name":"llama3.1:latest","model":"llama3.1:latest"}]}`},
		{name: "ollama not pulled", cfg: Config{Provider: "ollama", OllamaBaseURL: "http://ollama.test:11434", Model: "qwen3"},
			path: "/api/tags", status: 200, body: `{"models":[{"name":"llama3.1:latest"}]}`, wantErr: `ollama/qwen3: the provider does not list model "qwen3"`},
		{name: "unreachable", cfg: Config{Provider: "openai", OpenAIAPIKey: key, Model: "gpt-x"},
			netError: true, wantErr: "openai/gpt-x: unreachable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var hits atomic.Int32
			cfg := tt.cfg
			cfg.HTTPClient = &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				hits.Add(1)
				if tt.netError {
					return nil, &netErr{}
				}
				if r.URL.Path != tt.path || r.Method != http.MethodGet {
					t.Errorf("probe %s %s, want GET %s", r.Method, r.URL.Path, tt.path)
				}
				if tt.header != "" && !strings.Contains(r.Header.Get(tt.header), key) {
					t.Errorf("probe header %s = %q, want the key", tt.header, r.Header.Get(tt.header))
				}
				return &http.Response{StatusCode: tt.status, Body: ioNopCloser(tt.body), Header: http.Header{}}, nil
			})}
			m, err := New(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			err = m.Probe(context.Background())
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Probe = %v, want nil", err)
				}
			} else {
				if err == nil || !strings.Contains(workflow.PublicMessage(err), tt.wantErr) || workflow.KindOf(err) != workflow.KindUnavailable {
					t.Fatalf("Probe = %v, want KindUnavailable containing %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), key) {
					t.Errorf("Probe error quotes the key: %v", err)
				}
			}
			// The result is cached: a second probe within ProbeTTL asks nothing.
			_ = m.Probe(context.Background())
			m.probe.wait()
			if n := hits.Load(); n != 1 {
				t.Errorf("provider saw %d probe requests, want 1 (cached)", n)
			}
		})
	}
}

// TestProbeCacheExpires: after ProbeTTL the provider is asked again, so a
// recovered provider shows as reachable.
func TestProbeCacheExpires(t *testing.T) {
	t.Parallel()
	var up atomic.Bool
	cfg := Config{Provider: "openai", OpenAIAPIKey: "k", Model: "m", HTTPClient: &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
		if !up.Load() {
			return &http.Response{StatusCode: 503, Body: ioNopCloser(`{}`), Header: http.Header{}}, nil
		}
		return &http.Response{StatusCode: 200, Body: ioNopCloser(`{"data":[{"id":"m"}]}`), Header: http.Header{}}, nil
	})}}
	m, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1000, 0)
	m.probe.now = func() time.Time { return now }
	if err := m.Probe(context.Background()); err == nil || !strings.Contains(err.Error(), "HTTP 503") {
		t.Fatalf("Probe = %v, want HTTP 503", err)
	}
	up.Store(true)
	now = now.Add(ProbeTTL - time.Second)
	if err := m.Probe(context.Background()); err == nil {
		t.Fatal("a probe inside the TTL asked the provider again")
	}
	m.probe.wait()
	now = now.Add(2 * time.Second)
	// After the TTL the stale result comes back at once while a background
	// probe refreshes it; the next call sees the fresh one.
	if err := m.Probe(context.Background()); err == nil {
		t.Fatal("the first call after the TTL waited for the provider instead of answering from the cache")
	}
	m.probe.wait()
	if err := m.Probe(context.Background()); err != nil {
		t.Fatalf("Probe after the refresh = %v, want nil", err)
	}
}

// TestCloseEndsProbeInFlight: Close cancels a probe the provider has not
// answered, returns only once its goroutine has ended, and no probe starts
// after it.
func TestCloseEndsProbeInFlight(t *testing.T) {
	t.Parallel()
	entered, release := make(chan struct{}), make(chan struct{})
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 1 {
			close(entered)
		}
		select { // blocks until the client gives up or the test ends
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	m, err := New(context.Background(), Config{Provider: "openai", OpenAIBaseURL: srv.URL, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-entered; cancel() }()
	if err := m.Probe(ctx); err == nil || !strings.Contains(err.Error(), "has not answered yet") {
		t.Fatalf("Probe = %v, want the first probe not answered yet", err)
	}
	m.probe.mu.Lock()
	running := m.probe.running
	m.probe.mu.Unlock()
	if running == nil {
		t.Fatal("no probe in flight before Close")
	}
	if err := m.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
	select {
	case <-running:
	default:
		t.Fatal("Close returned while the probe's goroutine was still running")
	}
	m.probe.mu.Lock()
	last := m.probe.last
	m.probe.mu.Unlock()
	if last == nil || !strings.Contains(last.Error(), "probe cancelled: the model is closed") {
		t.Errorf("the probe in flight ended with %v, want cancelled by Close", last)
	}
	err = m.Probe(context.Background())
	if err == nil || workflow.KindOf(err) != workflow.KindUnavailable || !strings.Contains(err.Error(), "the model is closed") {
		t.Errorf("Probe after Close = %v, want unavailable: closed", err)
	}
	if n := hits.Load(); n != 1 {
		t.Errorf("provider saw %d probe requests, want 1 (none after Close)", n)
	}
}

// TestRouterProbeJoinsEveryModel: the router probes each distinct model
// once and reports every failing one.
func TestRouterProbeJoinsEveryModel(t *testing.T) {
	t.Parallel()
	good, bad := &probeStub{name: "a/good"}, &probeStub{name: "b/bad", err: workflow.Errorf(workflow.KindUnavailable, "b/bad: unreachable")}
	r := NewRouter(Route{Name: "a/good", Model: good}, map[workflow.Stage]Route{
		workflow.StageOne: {Name: "a/good", Model: good}, workflow.StageTwo: {Name: "b/bad", Model: bad},
	}, []Route{{Name: "b/bad", Model: bad}})
	err := r.Probe(context.Background())
	if err == nil || !strings.Contains(err.Error(), "b/bad: unreachable") {
		t.Fatalf("Probe = %v, want b/bad's failure", err)
	}
	if good.calls != 1 || bad.calls != 1 {
		t.Errorf("probes = %d/%d, want each model once", good.calls, bad.calls)
	}
}

type probeStub struct {
	name  string
	err   error
	calls int
}

func (p *probeStub) Name() string { return p.name }
func (p *probeStub) Generate(context.Context, workflow.ModelRequest) (workflow.ModelResponse, error) {
	return workflow.ModelResponse{}, nil
}
func (p *probeStub) Probe(context.Context) error { p.calls++; return p.err }

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

type netErr struct{}

func (*netErr) Error() string   { return "dial tcp 127.0.0.1:9: connect: connection refused" }
func (*netErr) Timeout() bool   { return false }
func (*netErr) Temporary() bool { return false }

func ioNopCloser(s string) io.ReadCloser { return io.NopCloser(strings.NewReader(s)) }
