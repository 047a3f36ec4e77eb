package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/twostep/twostep/actions"
	"github.com/twostep/twostep/workflow"
)

// testServer is an in-process MCP server with one tool of each kind the
// gateway maps, reached through in-memory transports.
type testServer struct {
	srv       *sdk.Server
	cancelled chan struct{} // closed when the slow tool's call is cancelled
	connects  atomic.Int32
}

func obj(props string) map[string]any {
	var m map[string]any
	if err := json.Unmarshal([]byte(`{"type":"object","properties":`+props+`}`), &m); err != nil {
		panic(err)
	}
	return m
}

func newTestServer() *testServer {
	ts := &testServer{cancelled: make(chan struct{})}
	ts.srv = sdk.NewServer(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	text := func(s string) *sdk.CallToolResult {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
	}
	args := func(req *sdk.CallToolRequest) map[string]any {
		var m map[string]any
		_ = json.Unmarshal(req.Params.Arguments, &m)
		return m
	}
	ts.srv.AddTool(&sdk.Tool{Name: "lookup", Description: "Looks a customer up.", InputSchema: obj(`{"id":{"type":"string"}}`),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return text("customer " + args(req)["id"].(string) + " is ACME"), nil
		})
	destructive := true
	ts.srv.AddTool(&sdk.Tool{Name: "delete", Description: "Deletes a customer.", InputSchema: obj(`{"id":{"type":"string"}}`),
		Annotations: &sdk.ToolAnnotations{DestructiveHint: &destructive}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return text("deleted"), nil })
	ts.srv.AddTool(&sdk.Tool{Name: "stats", InputSchema: obj(`{}`), Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{StructuredContent: map[string]any{"orders": 3, "open": true}}, nil
		})
	ts.srv.AddTool(&sdk.Tool{Name: "picture", InputSchema: obj(`{}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.TextContent{Text: "here it is"},
				&sdk.ImageContent{Data: []byte("\x89PNG fake"), MIMEType: "image/png"},
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///reports/q3.csv", MIMEType: "text/csv", Text: "a,b\n1,2\n"}},
			}}, nil
		})
	ts.srv.AddTool(&sdk.Tool{Name: "fail", InputSchema: obj(`{}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "quota exceeded for today"}}}, nil
		})
	ts.srv.AddTool(&sdk.Tool{Name: "slow", InputSchema: obj(`{}`)},
		func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			<-ctx.Done()
			close(ts.cancelled)
			return nil, ctx.Err()
		})
	ts.srv.AddTool(&sdk.Tool{Name: "verbose", Description: strings.Repeat("very ", 1000), InputSchema: obj(`{}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return text("ok"), nil })
	ts.srv.AddTool(&sdk.Tool{Name: "broken", InputSchema: obj(`{"x":{"type":"no-such-type"}}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return text("never"), nil })
	return ts
}

// transport connects a fresh in-memory session to the server.
func (ts *testServer) transport(ctx context.Context, _ ServerConfig) (sdk.Transport, error) {
	ts.connects.Add(1)
	ct, st := sdk.NewInMemoryTransports()
	if _, err := ts.srv.Connect(context.WithoutCancel(ctx), st, nil); err != nil {
		return nil, err
	}
	return ct, nil
}

// start mounts ts as server "crm" into a new registry.
func start(t *testing.T, ts *testServer, opts Options) (*actions.Registry, *Manager) {
	t.Helper()
	reg, err := actions.New(actions.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	opts.Transport = ts.transport
	opts.MinBackoff, opts.MaxBackoff = 20*time.Millisecond, 100*time.Millisecond
	m := New(Config{Servers: []ServerConfig{{Name: "crm", Command: "unused", Timeout: opts.ConnectTimeout}}}, reg, opts)
	m.Start(context.Background())
	t.Cleanup(func() { _ = m.Close() })
	return reg, m
}

func run(reg *actions.Registry, name string, params map[string]any) (workflow.ActionResult, error) {
	return reg.Execute(context.Background(), workflow.ActionCall{WorkflowID: "w", UserID: "u", Round: 1, Step: 1, Action: name, Parameters: params})
}

func TestToolsBecomeActions(t *testing.T) {
	t.Parallel()
	reg, m := start(t, newTestServer(), Options{})
	if got := m.Status()["mcp.crm"]; got != "ok" {
		t.Fatalf("status = %q, want ok", got)
	}
	for name, want := range map[string]workflow.Effect{
		"mcp.crm.lookup": workflow.EffectRead, "mcp.crm.stats": workflow.EffectRead,
		"mcp.crm.delete": workflow.EffectWrite, "mcp.crm.picture": workflow.EffectWrite,
	} {
		spec, ok := reg.Action(name)
		if !ok {
			t.Errorf("%s is not registered", name)
			continue
		}
		if spec.Effect != want || spec.Server != "crm" {
			t.Errorf("%s: effect %s server %q, want %s crm", name, spec.Effect, spec.Server, want)
		}
	}
	if spec, _ := reg.Action("mcp.crm.lookup"); spec.Description != "Looks a customer up." || !strings.Contains(string(spec.Parameters), `"id"`) {
		t.Errorf("lookup spec = %+v", spec)
	}
	if spec, _ := reg.Action("mcp.crm.verbose"); len(spec.Description) > maxDescription+len("…") || !strings.HasSuffix(spec.Description, "…") {
		t.Errorf("a %d-byte description was kept as %d bytes", 5000, len(spec.Description))
	}
	if _, ok := reg.Action("mcp.crm.broken"); ok {
		t.Error("a tool whose schema does not compile was registered")
	}
	if got := reg.ValidateParameters("mcp.crm.lookup", map[string]any{"id": 7}); len(got) != 1 {
		t.Errorf("ValidateParameters(id: 7) = %q, want one problem", got)
	}
}

func TestCallResults(t *testing.T) {
	t.Parallel()
	reg, _ := start(t, newTestServer(), Options{})

	res, err := run(reg, "mcp.crm.lookup", map[string]any{"id": "c-1"})
	if err != nil || res.Text != "customer c-1 is ACME" || len(res.Documents) != 0 {
		t.Errorf("lookup = %+v, %v", res, err)
	}

	res, err = run(reg, "mcp.crm.stats", nil)
	if err != nil || len(res.Documents) != 1 {
		t.Fatalf("stats = %+v, %v", res, err)
	}
	d := res.Documents[0]
	var got map[string]any
	if d.MimeType != "application/json" || json.Unmarshal(d.Content, &got) != nil || got["orders"] != 3.0 {
		t.Errorf("stats document = %s %s", d.MimeType, d.Content)
	}
	if !strings.Contains(res.Text, `"orders":3`) {
		t.Errorf("stats text = %q, want the structured content", res.Text)
	}

	res, err = run(reg, "mcp.crm.picture", nil)
	if err != nil || res.Text != "here it is" || len(res.Documents) != 2 {
		t.Fatalf("picture = %+v, %v", res, err)
	}
	if d := res.Documents[0]; d.Name != "image-2.png" || d.MimeType != "image/png" || string(d.Content) != "\x89PNG fake" {
		t.Errorf("image document = %s %s %q", d.Name, d.MimeType, d.Content)
	}
	if d := res.Documents[1]; d.Name != "q3.csv" || d.MimeType != "text/csv" || string(d.Content) != "a,b\n1,2\n" {
		t.Errorf("resource document = %s %s %q", d.Name, d.MimeType, d.Content)
	}

	_, err = run(reg, "mcp.crm.fail", nil)
	if err == nil || !strings.Contains(workflow.PublicMessage(err), "quota exceeded for today") {
		t.Errorf("fail: %v, want a step failure carrying the tool's text", err)
	}
}

func TestResultCaps(t *testing.T) {
	t.Parallel()
	reg, _ := start(t, newTestServer(), Options{Limits: actions.Limits{MaxResponseBytes: 8, MaxDocumentBytes: 4}})
	_, err := run(reg, "mcp.crm.lookup", map[string]any{"id": "c-1"})
	if err == nil || !strings.Contains(workflow.PublicMessage(err), "8-byte limit") {
		t.Errorf("long text: %v, want the text cap", err)
	}
	_, err = run(reg, "mcp.crm.stats", nil)
	if err == nil || !strings.Contains(workflow.PublicMessage(err), "document limit") {
		t.Errorf("big document: %v, want the document cap", err)
	}
}

func TestSlowToolCancelledOnStop(t *testing.T) {
	t.Parallel()
	ts := newTestServer()
	reg, _ := start(t, ts, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := reg.Execute(ctx, workflow.ActionCall{UserID: "u", Action: "mcp.crm.slow"})
		done <- err
	}()
	time.Sleep(50 * time.Millisecond) // let the call reach the server
	cancel()
	select {
	case err := <-done:
		if workflow.KindOf(err) != workflow.KindUnavailable || !strings.Contains(workflow.PublicMessage(err), "cancelled") {
			t.Errorf("cancelled call: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not return after its context was cancelled")
	}
	select {
	case <-ts.cancelled: // the server got notifications/cancelled
	case <-time.After(10 * time.Second):
		t.Fatal("the server never saw the cancellation")
	}
}

func TestPerCallTimeout(t *testing.T) {
	t.Parallel()
	ts := newTestServer()
	reg, err := actions.New(actions.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := New(Config{Servers: []ServerConfig{{Name: "crm", Command: "x", Timeout: 100 * time.Millisecond}}}, reg, Options{Transport: ts.transport})
	m.Start(context.Background())
	defer m.Close()
	_, err = run(reg, "mcp.crm.slow", nil)
	if !strings.Contains(workflow.PublicMessage(err), "did not answer within 100ms") {
		t.Errorf("slow call: %v, want the timeout", err)
	}
}

func TestToolListChanged(t *testing.T) {
	t.Parallel()
	ts := newTestServer()
	reg, _ := start(t, ts, Options{})
	ts.srv.AddTool(&sdk.Tool{Name: "fresh", InputSchema: obj(`{}`), Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "new"}}}, nil
		})
	ts.srv.RemoveTools("delete")
	waitFor(t, func() bool {
		_, fresh := reg.Action("mcp.crm.fresh")
		_, deleted := reg.Action("mcp.crm.delete")
		return fresh && !deleted
	}, "the list to follow tools/list_changed")
	if res, err := run(reg, "mcp.crm.fresh", nil); err != nil || res.Text != "new" {
		t.Errorf("fresh = %+v, %v", res, err)
	}
}

func TestUnreachableServerFailsStepsAndComesBack(t *testing.T) {
	t.Parallel()
	ts := newTestServer()
	var down atomic.Bool
	reg, err := actions.New(actions.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := New(Config{Servers: []ServerConfig{{Name: "crm", Command: "x"}}}, reg, Options{
		MinBackoff: 20 * time.Millisecond, MaxBackoff: 50 * time.Millisecond, PingInterval: 50 * time.Millisecond,
		Transport: func(ctx context.Context, c ServerConfig) (sdk.Transport, error) {
			if down.Load() {
				return nil, errors.New("connection refused")
			}
			return ts.transport(ctx, c)
		},
	})
	m.Start(context.Background())
	defer m.Close()
	if _, err := run(reg, "mcp.crm.lookup", map[string]any{"id": "a"}); err != nil {
		t.Fatalf("first call: %v", err)
	}
	// Kill every server-side session and refuse new connections.
	down.Store(true)
	for ss := range ts.srv.Sessions() {
		_ = ss.Close()
	}
	waitFor(t, func() bool { return m.Status()["mcp.crm"] != "ok" }, "the server to be seen down")
	_, err = run(reg, "mcp.crm.lookup", map[string]any{"id": "a"})
	if workflow.KindOf(err) != workflow.KindUnavailable || !strings.Contains(workflow.PublicMessage(err), "MCP server crm is unreachable") {
		t.Errorf("call while down: %v", err)
	}
	if _, ok := reg.Action("mcp.crm.lookup"); !ok {
		t.Error("the tools of a down server are no longer listed")
	}
	down.Store(false)
	waitFor(t, func() bool { return m.Status()["mcp.crm"] == "ok" }, "the server to come back")
	if res, err := run(reg, "mcp.crm.lookup", map[string]any{"id": "b"}); err != nil || res.Text != "customer b is ACME" {
		t.Errorf("call after the server came back: %+v, %v", res, err)
	}
}

func TestCloseStopsSupervisors(t *testing.T) {
	t.Parallel()
	ts := newTestServer()
	_, m := start(t, ts, Options{})
	done := make(chan struct{})
	go func() { _ = m.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return")
	}
	if got := m.Status()["mcp.crm"]; got == "ok" {
		t.Errorf("status after Close = %q", got)
	}
}

// waitFor polls cond for up to 15 s (the machine may be loaded).
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
