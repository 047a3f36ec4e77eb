package test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/rs/zerolog"

	"github.com/twostep/twostep/actions"
	"github.com/twostep/twostep/adminv1"
	"github.com/twostep/twostep/apiv1"
	"github.com/twostep/twostep/changefeed"
	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/httpapi"
	"github.com/twostep/twostep/llm"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/wiring"
	"github.com/twostep/twostep/workflow"
)

func init() { gin.SetMode(gin.ReleaseMode) } // no route dump in test logs

// Tokens and marker secrets of the admin tests. The markers must never
// reach a stored trace; adminAPIKeyMarker has characters encoding/json
// escapes, so its JSON-quoted form is exercised too.
const (
	adminAliceToken       = "tok-admin-test-alice-0123456789"
	adminRootToken        = "tok-admin-test-root-0123456789"
	adminConnSecretMarker = "conn-secret-MARKER-5f1c9e"
	adminAPIKeyMarker     = "sk-MARKER<&>apikey-77aa"
)

// stageScript is the model of the admin tests: replies queued per stage;
// once a stage's queue is empty its calls block until cancelled (block) or
// fail. Safe for concurrent use.
type stageScript struct {
	mu     sync.Mutex
	queues map[workflow.Stage][]string
	block  map[workflow.Stage]bool
}

func (s *stageScript) push(stage workflow.Stage, replies ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queues[stage] = append(s.queues[stage], replies...)
}

func (s *stageScript) blockWhenEmpty(stage workflow.Stage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.block[stage] = true
}

func (s *stageScript) reply(_ int, req workflow.ModelRequest) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if q := s.queues[req.Stage]; len(q) > 0 {
		s.queues[req.Stage] = q[1:]
		return q[0], nil
	}
	if s.block[req.Stage] {
		return "", scripted.ErrBlock
	}
	return "", workflow.Errorf(workflow.KindUnavailable, "no %s reply scripted", req.Stage)
}

// adminEnv is the gateway wired by the real wiring (wiring.Wire, as
// cmd/gateway runs it): memstore behind the trace-redacting decorator, the
// engine with both modes, the real actions registry, the scripted model,
// the HTTP server with the admin routes — served on a loopback port.
type adminEnv struct {
	url     string
	raw     *memstore.Store // the store under the redaction decorator
	engine  *engine.Engine
	changes workflow.Changes // the change service the engine publishes to
	model   *scripted.Model
	script  *stageScript
	// deltas is the gateway's delta transport (in process: the memory
	// store's), where a test publishes the pieces of a streaming reply.
	deltas *changefeed.DeltaFeed
}

func newAdminEnv(t *testing.T) *adminEnv {
	t.Helper()
	script := &stageScript{queues: map[workflow.Stage][]string{}, block: map[workflow.Stage]bool{}}
	model := &scripted.Model{Reply: script.reply}
	cfg := wiring.Config{
		MaxSteps: 10, LLMProvider: llm.ProviderScripted,
		// A configured key the redactor must scrub, as it would a real one.
		OpenAIAPIKey: adminAPIKeyMarker,
		Users:        []httpapi.Credential{{UserID: "alice", Token: adminAliceToken}},
		Admins:       []httpapi.Credential{{UserID: "root", Token: adminRootToken}},
		Actions: actions.Config{Connections: []actions.ConnectionConfig{{
			User: "alice", Label: "crm", Kind: actions.KindHTTP, BaseURL: "https://crm.example.test",
			Description: "the CRM", Headers: map[string]string{"X-Api-Key": adminConnSecretMarker},
		}}},
	}
	cfg.File.Limits.LeaseTTL = 2 * time.Second
	cfg.File.Limits.RecoverInterval = 50 * time.Millisecond
	// A test may end with a round held in a blocking model call.
	cfg.File.Limits.ShutdownGrace = 50 * time.Millisecond
	g, err := wiring.Wire(context.Background(), cfg, zerolog.Nop(), model)
	if err != nil {
		t.Fatalf("wiring.Wire: %v", err)
	}
	raw := workflow.StoreAs[*memstore.Store](g.Store)
	if raw == nil {
		t.Fatalf("the store under the decorator is a %T, want the memory store", g.Store)
	}
	// An MCP server's tool, as actions/mcp mounts it; its description is
	// markup the admin page must show as text.
	g.Registry.SetExternal("files", []actions.ExternalAction{{
		Spec: workflow.ActionSpec{Name: "mcp.files.read", Description: `<img src=x onerror="window.__pwned=1">reads a file`,
			Effect: workflow.EffectRead, Server: "files"},
		Schema: map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}},
		Run: func(context.Context, workflow.ActionCall) (workflow.ActionResult, error) {
			return workflow.ActionResult{Text: "file text"}, nil
		},
	}})
	// An OpenAPI operation, as actions/openapi mounts it: the panel shows
	// its source, method and path.
	g.Registry.SetOperations("openapi.tickets", []actions.HTTPOperation{{
		Spec:   workflow.ActionSpec{Name: "tickets.getTicket", Description: "Read one ticket", Effect: workflow.EffectRead, Server: "tickets"},
		Schema: map[string]any{"type": "object", "properties": map[string]any{"ticketId": map[string]any{"type": "integer"}}, "required": []any{"ticketId"}},
		Method: "GET", BaseURL: "https://tickets.example.test", Path: "/tickets/{ticketId}",
		Params: map[string]actions.ParamIn{"ticketId": actions.InPath},
	}})
	ctx, cancel := context.WithCancel(context.Background())
	g.Engine.Start(ctx)
	hs := httptest.NewServer(g.API.Routes())
	t.Cleanup(func() {
		hs.Close()
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer scancel()
		if err := g.Engine.Shutdown(sctx); err != nil {
			t.Errorf("engine.Shutdown: %v", err)
		}
		cancel()
		_ = g.Close()
	})
	deltas, ok := g.Deltas.(*changefeed.DeltaFeed)
	if !ok {
		t.Fatalf("the delta transport is a %T, want the in-process feed", g.Deltas)
	}
	return &adminEnv{url: hs.URL, raw: raw, engine: g.Engine, changes: g.Changes, model: model, script: script, deltas: deltas}
}

// call sends a request and returns the status and body; body may be nil.
func (e *adminEnv) call(t *testing.T, method, path, token string, body any) (int, []byte) {
	t.Helper()
	var r io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, e.url+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, data
}

// must sends a request that must answer want and decodes the reply into out.
func (e *adminEnv) must(t *testing.T, want int, method, path, token string, body, out any) {
	t.Helper()
	status, data := e.call(t, method, path, token, body)
	if status != want {
		t.Fatalf("%s %s = %d, want %d: %s", method, path, status, want, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: decoding %s: %v", method, path, data, err)
		}
	}
}

// create starts a workflow for alice over HTTP.
func (e *adminEnv) create(t *testing.T, prompt string) string {
	t.Helper()
	var wf apiv1.WorkflowView
	e.must(t, http.StatusCreated, "POST", "/api/v1/workflows", adminAliceToken,
		map[string]any{"prompt": prompt, "maxSteps": 5}, &wf)
	return wf.ID
}

// wait blocks until the workflow's round is no longer running.
func (e *adminEnv) wait(t *testing.T, id string) *workflow.Workflow {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wf, err := enginetest.Await(ctx, e.changes, e.engine.Admin().Get, id)
	if err != nil {
		t.Fatalf("Wait(%s): %v", id, err)
	}
	return wf
}

// waitCalls blocks until the model has received n calls.
func (e *adminEnv) waitCalls(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(e.model.Calls()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("the model received %d calls, want %d", len(e.model.Calls()), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// traces returns the workflow's traces through the admin API, waiting until
// there are at least n.
func (e *adminEnv) traces(t *testing.T, id string, n int) []adminv1.TraceView {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var list adminv1.TraceList
		e.must(t, http.StatusOK, "GET", "/admin/v1/workflows/"+id+"/traces", adminRootToken, nil, &list)
		if len(list.Traces) >= n {
			return list.Traces
		}
		if time.Now().After(deadline) {
			t.Fatalf("workflow %s has %d traces, want %d", id, len(list.Traces), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// stop stops alice's workflow over HTTP (cancelling the in-flight call).
func (e *adminEnv) stop(t *testing.T, id string) {
	t.Helper()
	e.must(t, http.StatusOK, "POST", "/api/v1/workflows/"+id+"/stop", adminAliceToken, nil, nil)
}

// wirePrompt is a prompt the model received as the admin API shows it.
func wirePrompt(p []workflow.PromptMessage) []adminv1.PromptMessage {
	out := make([]adminv1.PromptMessage, len(p))
	for i, m := range p {
		out[i] = adminv1.PromptMessage(m)
	}
	return out
}
