package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/twostep/twostep/workflow"
)

// ProbeTTL is how long a probe's result is reused: /readyz may be polled
// every second by several load balancers, and a model listing costs the
// provider a request each time.
const ProbeTTL = 30 * time.Second

// probeTimeout bounds one probe request.
const probeTimeout = 3 * time.Second

// prober checks, cheaply and without spending tokens, that a provider
// answers and knows the configured model: a models-list request
// (OpenAI-compatible servers and Gemini `GET /models`, Anthropic
// `GET /v1/models`, Ollama `GET /api/tags`).
type prober struct {
	provider, model string
	url             string
	header          http.Header
	http            *http.Client
	redact          func(error) error

	// life is cancelled by close: it ends the probe in flight, whose
	// goroutine close then waits for through refreshes.
	life      context.Context
	cancel    context.CancelFunc
	refreshes sync.WaitGroup

	mu      sync.Mutex
	closed  bool          // set by close: no probe starts after it
	checked time.Time     // when last was fetched; zero before the first probe
	last    error         // the last probe's result
	running chan struct{} // closed when the probe in flight ends; nil if none
	now     func() time.Time
}

func newProber(cfg Config, redact func(error) error) *prober {
	p := &prober{provider: cfg.Provider, model: cfg.Model, header: http.Header{}, redact: redact, now: time.Now}
	p.life, p.cancel = context.WithCancel(context.Background())
	p.http = &http.Client{Timeout: probeTimeout}
	if cfg.HTTPClient != nil {
		*p.http = *cfg.HTTPClient
		p.http.Timeout = probeTimeout
	}
	switch cfg.Provider {
	case ProviderOpenAI:
		p.url = strings.TrimRight(cfg.OpenAIBaseURL, "/") + "/models"
		if cfg.OpenAIAPIKey != "" {
			p.header.Set("Authorization", "Bearer "+cfg.OpenAIAPIKey)
		}
	case ProviderGoogleAI:
		p.url = strings.TrimRight(cfg.GeminiBaseURL, "/") + "/models"
		p.header.Set("Authorization", "Bearer "+cfg.GoogleAPIKey)
	case ProviderAnthropic:
		p.url = strings.TrimRight(cfg.AnthropicBaseURL, "/") + "/models?limit=1000"
		p.header.Set("x-api-key", cfg.AnthropicAPIKey)
		p.header.Set("anthropic-version", "2023-06-01")
	case ProviderOllama:
		p.url = strings.TrimRight(cfg.OllamaBaseURL, "/") + "/api/tags"
	}
	return p
}

// Probe reports whether the model's provider answers and lists the
// configured model; nil when it does. Results are reused for ProbeTTL;
// after that the last result is returned at once while one background
// probe refreshes it, so a readiness check never waits on the provider
// except for the very first probe (bounded by ctx and probeTimeout). The
// error is a *workflow.Error of KindUnavailable whose message is safe to
// show (no key, no URL credentials). After Close it reports the model
// closed and asks the provider nothing.
func (m *Model) Probe(ctx context.Context) error {
	if m.probe == nil {
		return nil
	}
	return m.probe.check(ctx)
}

func (p *prober) check(ctx context.Context) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return p.fail("the model is closed")
	}
	if (p.checked.IsZero() || p.now().Sub(p.checked) >= ProbeTTL) && p.running == nil {
		p.running = make(chan struct{})
		p.refreshes.Add(1)
		go p.refresh(p.running)
	}
	if !p.checked.IsZero() {
		defer p.mu.Unlock()
		return p.last
	}
	running := p.running
	p.mu.Unlock()
	select {
	case <-running:
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.last
	case <-ctx.Done():
		return p.fail("the first probe has not answered yet")
	}
}

// refresh runs one probe with its own deadline (not a caller's, which may
// be shorter, but ended by close) and publishes the result.
func (p *prober) refresh(done chan struct{}) {
	defer p.refreshes.Done()
	ctx, cancel := context.WithTimeout(p.life, probeTimeout)
	defer cancel()
	err := p.fetch(ctx)
	p.mu.Lock()
	p.last, p.checked, p.running = err, p.now(), nil
	p.mu.Unlock()
	close(done)
}

// close cancels the probe in flight, if any, and returns once its
// goroutine has ended; no probe starts after it. It is idempotent.
func (p *prober) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.cancel()
	p.refreshes.Wait()
}

// fail is a probe failure: unavailable, naming the provider and model.
func (p *prober) fail(format string, args ...any) error {
	return workflow.Errorf(workflow.KindUnavailable, "%s/%s: %s", p.provider, p.model, fmt.Sprintf(format, args...))
}

// wait blocks until no probe is in flight (for tests).
func (p *prober) wait() {
	p.mu.Lock()
	running := p.running
	p.mu.Unlock()
	if running != nil {
		<-running
	}
}

func (p *prober) fetch(ctx context.Context) error {
	fail := p.fail
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.url, nil)
	if err != nil {
		return fail("cannot build the probe request")
	}
	req.Header = p.header.Clone()
	resp, err := p.http.Do(req)
	if err != nil {
		if p.life.Err() != nil {
			return fail("probe cancelled: the model is closed")
		}
		var ue interface{ Timeout() bool }
		if errors.As(err, &ue) && ue.Timeout() {
			return fail("no answer within %s", probeTimeout)
		}
		// The *url.Error's cause, without the URL (which may carry credentials).
		cause := errors.Unwrap(err)
		if cause == nil {
			cause = err
		}
		return fail("unreachable (%v)", p.redact(cause))
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error json.RawMessage `json:"error"`
		}
		reason := ""
		if json.Unmarshal(body, &e) == nil && len(e.Error) > 0 {
			var obj struct {
				Message string `json:"message"`
			}
			var s string
			if json.Unmarshal(e.Error, &obj) == nil && obj.Message != "" {
				reason = ": " + obj.Message
			} else if json.Unmarshal(e.Error, &s) == nil && s != "" {
				reason = ": " + s
			}
		}
		if reason != "" {
			reason = p.redact(errors.New(reason)).Error()
		}
		return fail("the models listing answered HTTP %d%s", resp.StatusCode, reason)
	}
	ids, err := modelIDs(p.provider, body)
	if err != nil {
		return fail("the models listing could not be read")
	}
	// Anthropic aliases (claude-sonnet-4-0) are not listed by id; a
	// successful authenticated listing is proof enough there.
	if p.provider == ProviderAnthropic || len(ids) == 0 {
		return nil
	}
	for _, id := range ids {
		if sameModel(id, p.model) {
			return nil
		}
	}
	return fail("the provider does not list model %q (it lists %d models)", p.model, len(ids))
}

// modelIDs extracts the model names of a listing: {"data":[{"id"}]} for
// OpenAI-compatible servers and Anthropic, {"models":[{"name"}]} for Ollama.
func modelIDs(provider string, body []byte) ([]string, error) {
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
		Models []struct {
			Name  string `json:"name"`
			Model string `json:"model"`
		} `json:"models"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, err
	}
	var ids []string
	for _, d := range list.Data {
		ids = append(ids, d.ID)
	}
	for _, m := range list.Models {
		ids = append(ids, m.Name, m.Model)
	}
	return ids, nil
}

// sameModel matches a listed id against the configured name, allowing
// Gemini's "models/" prefix and Ollama's implicit ":latest" tag.
func sameModel(listed, configured string) bool {
	listed = strings.TrimPrefix(listed, "models/")
	return listed == configured || listed == configured+":latest"
}

// Probe checks every model the router routes to and reports every failing
// one in one message; nil when all answer.
func (r *Router) Probe(ctx context.Context) error {
	var failed []string
	for _, rt := range r.routes() {
		if p, ok := rt.Model.(interface{ Probe(context.Context) error }); ok {
			if err := p.Probe(ctx); err != nil {
				failed = append(failed, workflow.PublicMessage(err))
			}
		}
	}
	if len(failed) == 0 {
		return nil
	}
	return workflow.Errorf(workflow.KindUnavailable, "%s", strings.Join(failed, "; "))
}

// routes lists every configured route once by name: the default, the stage
// models, then the fallbacks.
func (r *Router) routes() []Route {
	out := []Route{r.def}
	add := func(rt Route) {
		for _, have := range out {
			if have.Name == rt.Name {
				return
			}
		}
		out = append(out, rt)
	}
	for _, st := range []workflow.Stage{workflow.StageOne, workflow.StageTwo, workflow.StagePlan, workflow.StageRepair, workflow.StageAction} {
		if rt, ok := r.stages[st]; ok {
			add(rt)
		}
	}
	for _, rt := range r.fallback {
		add(rt)
	}
	return out
}
