package test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// scriptedLLM is an OpenAI-compatible server whose Stage 1 replies come from
// a list, one per Stage 1 call, each with the parameters its Stage 2 call
// answers. It keeps every Stage 1 prompt it received.
type scriptedLLM struct {
	srv     *http.Server
	url     string
	mu      sync.Mutex
	script  []scriptStep
	stage1  []string // user part of every Stage 1 prompt, in order
	pending map[string]any
}

// scriptStep is one Stage 1 choice and its Stage 2 parameters.
type scriptStep struct {
	action string
	fields []map[string]any // parametersSchema fields
	params map[string]any
}

func newScriptedLLM(t *testing.T, steps ...scriptStep) *scriptedLLM {
	t.Helper()
	m := &scriptedLLM{script: steps}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m.url = "http://" + ln.Addr().String()
	m.srv = &http.Server{Handler: http.HandlerFunc(m.serve)}
	go func() { _ = m.srv.Serve(ln) }()
	t.Cleanup(func() { _ = m.srv.Close() })
	return m
}

func (m *scriptedLLM) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models") { // the readiness probe
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"fake-model","object":"model","created":1,"owned_by":"test"}]}`))
		return
	}
	var req chatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	var system, user strings.Builder
	for _, msg := range req.Messages {
		if msg.Role == "system" {
			system.WriteString(contentText(msg.Content))
		} else {
			user.WriteString(contentText(msg.Content))
		}
	}
	reply := m.reply(system.String(), user.String())
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-mcp", "object": "chat.completion", "created": 1, "model": "fake-model",
		"choices": []map[string]any{{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": reply}}},
		"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
	})
}

func (m *scriptedLLM) reply(system, user string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if strings.Contains(system, "Fill in the parameters of the chosen action") {
		data, _ := json.Marshal(map[string]any{"schema": "parameters_v1", "parameters": m.pending})
		return string(data)
	}
	m.stage1 = append(m.stage1, user)
	step := scriptStep{action: "workflow.complete", fields: []map[string]any{{"name": "message", "type": "string", "required": true}},
		params: map[string]any{"message": "done"}}
	if len(m.script) > 0 {
		step, m.script = m.script[0], m.script[1:]
	}
	m.pending = step.params
	fields := step.fields
	if fields == nil {
		fields = []map[string]any{}
	}
	data, _ := json.Marshal(map[string]any{
		"action": step.action, "actionObjective": "run " + step.action, "parametersContext": "as scripted",
		"parametersSchema": map[string]any{"fields": fields}, "learnings": []string{},
		"requiredConnection": nil, "requiredInputDocuments": []string{},
	})
	return string(data)
}

// stage1Prompts returns the Stage 1 prompts received so far.
func (m *scriptedLLM) stage1Prompts() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.stage1...)
}

// startMCPGateway runs the gateway with model and a config file holding yaml.
func startMCPGateway(t *testing.T, model *scriptedLLM, yaml string) *gateway {
	t.Helper()
	path := filepath.Join(t.TempDir(), "gateway.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	g := launchWith(t, nil, nil, []string{"OPENAI_BASE_URL=" + model.url + "/v1", "GATEWAY_CONFIG=" + path, "LOG_LEVEL=debug"})
	waitHealthy(t, g)
	t.Cleanup(func() {
		if err := g.stop(); err != nil {
			t.Errorf("gateway shutdown: %v\n%s", err, g.stderr)
		}
	})
	return g
}

// actionList is GET /api/v1/actions as a client reads it.
type actionList struct {
	Actions []struct {
		Name   string `json:"name"`
		Effect string `json:"effect"`
		Server string `json:"server"`
	} `json:"actions"`
}

// TestMCPEverythingServerRound runs a full round through the built binary
// against the reference server @modelcontextprotocol/server-everything over
// stdio: Stage 1 chooses mcp.everything.get-sum, Stage 2 fills a and b, the
// tool's answer becomes the action message and is in the next Stage 1
// prompt. A second round runs get-env: the server sees none of the
// gateway's own environment.
func TestMCPEverythingServerRound(t *testing.T) {
	t.Parallel()
	entry := os.Getenv("TWOSTEP_MCP_EVERYTHING")
	node, err := exec.LookPath("node")
	if entry == "" || err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("CI needs node and TWOSTEP_MCP_EVERYTHING (the path of @modelcontextprotocol/server-everything's dist/index.js; .ci/run installs it)")
		}
		t.Skip("set TWOSTEP_MCP_EVERYTHING to server-everything's dist/index.js (and have node) to run")
	}
	num := func(name string) map[string]any {
		return map[string]any{"name": name, "type": "number", "required": true}
	}
	model := newScriptedLLM(t,
		scriptStep{action: "mcp.everything.get-sum", fields: []map[string]any{num("a"), num("b")}, params: map[string]any{"a": 17, "b": 25}},
		scriptStep{action: "workflow.complete", fields: []map[string]any{{"name": "message", "type": "string", "required": true}}, params: map[string]any{"message": "17 + 25 = 42"}},
		scriptStep{action: "mcp.everything.get-env", params: map[string]any{}},
	)
	g := startMCPGateway(t, model, "mcpServers:\n  - name: everything\n    command: "+node+"\n    args: ["+entry+", stdio]\n    timeout: 20s\n")

	var list actionList
	g.expect(t, 200, "GET", "/api/v1/actions", gwAlice, nil, &list)
	effects := map[string]string{}
	for _, a := range list.Actions {
		if strings.HasPrefix(a.Name, "mcp.") {
			if a.Server != "everything" {
				t.Errorf("%s has server %q", a.Name, a.Server)
			}
			effects[a.Name] = a.Effect
		}
	}
	if effects["mcp.everything.get-sum"] != "read" || effects["mcp.everything.echo"] != "read" || effects["mcp.everything.toggle-subscriber-updates"] != "write" {
		t.Fatalf("MCP actions and effects = %v", effects)
	}

	var wf wfView
	g.expect(t, http.StatusCreated, "POST", "/api/v1/workflows", gwAlice, map[string]any{"prompt": "add 17 and 25"}, &wf)
	if w := g.waitDone(t, gwAlice, wf.ID); w.Status != "completed" {
		t.Fatalf("round 1 = %+v\n%s", w, g.stderr)
	}
	msgs := g.messages(t, gwAlice, wf.ID)
	if len(msgs) != 3 || msgs[1].Action != "mcp.everything.get-sum" || msgs[1].Status != "success" || !strings.Contains(msgs[1].Text, "The sum of 17 and 25 is 42") {
		t.Fatalf("messages = %+v", msgs)
	}
	prompts := model.stage1Prompts()
	if len(prompts) != 2 || !strings.Contains(prompts[1], "The sum of 17 and 25 is 42") {
		t.Errorf("the second Stage 1 prompt does not show the tool's answer:\n%s", prompts[len(prompts)-1])
	}

	g.expect(t, http.StatusAccepted, "POST", "/api/v1/workflows/"+wf.ID+"/rounds", gwAlice, map[string]any{"prompt": "show the server environment"}, nil)
	if w := g.waitDone(t, gwAlice, wf.ID); w.Status != "completed" {
		t.Fatalf("round 2 = %+v", w)
	}
	msgs = g.messages(t, gwAlice, wf.ID)
	env := msgs[len(msgs)-2]
	if env.Action != "mcp.everything.get-env" || env.Status != "success" || !strings.Contains(env.Text, `"PATH"`) {
		t.Fatalf("get-env message = %+v", env)
	}
	for _, leak := range []string{"OPENAI_BASE_URL", "GATEWAY_TOKENS", "GATEWAY_CONFIG", gwAPIKey} {
		if strings.Contains(env.Text, leak) {
			t.Errorf("the MCP server's environment holds %s", leak)
		}
	}
}

// mcpHTTPServer is a streamable-HTTP MCP server in this test process that
// can be killed and started again on the same address.
type mcpHTTPServer struct {
	addr    string
	mu      sync.Mutex
	srv     *http.Server
	entered chan struct{} // receives when the slow tool starts
}

func (s *mcpHTTPServer) start(t *testing.T) {
	t.Helper()
	server := sdk.NewServer(&sdk.Implementation{Name: "remote", Version: "1"}, nil)
	read := &sdk.ToolAnnotations{ReadOnlyHint: true}
	schema := map[string]any{"type": "object", "properties": map[string]any{}}
	server.AddTool(&sdk.Tool{Name: "slow", Description: "Waits for a long time.", InputSchema: schema, Annotations: read},
		func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			s.entered <- struct{}{}
			<-ctx.Done()
			return nil, ctx.Err()
		})
	server.AddTool(&sdk.Tool{Name: "quick", Description: "Answers pong.", InputSchema: schema, Annotations: read},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "pong from remote"}}}, nil
		})
	handler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil)
	var ln net.Listener
	var err error
	for range 50 { // the port may linger for a moment after a kill
		if ln, err = net.Listen("tcp", s.addr); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.srv = &http.Server{Handler: handler}
	srv := s.srv
	s.mu.Unlock()
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("MCP server: %v", err)
		}
	}()
}

// kill drops the listener and every connection at once.
func (s *mcpHTTPServer) kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		_ = s.srv.Close()
		s.srv = nil
	}
}

// readiness returns /readyz's status and the check of MCP server name.
func (g *gateway) readiness(t *testing.T, name string) (string, string) {
	t.Helper()
	var h struct {
		Status string            `json:"status"`
		Checks map[string]string `json:"checks"`
	}
	g.expect(t, 200, "GET", "/readyz", "", nil, &h)
	return h.Status, h.Checks["mcp."+name]
}

// TestMCPHTTPServerKilledMidRound: a streamable-HTTP MCP server killed
// while a tool call is in flight makes that step fail cleanly (the round
// goes on and the next Stage 1 sees why), the gateway stays up with
// /readyz degraded, and once the server is back its tools run again.
func TestMCPHTTPServerKilledMidRound(t *testing.T) {
	t.Parallel()
	remote := &mcpHTTPServer{addr: freeAddr(t), entered: make(chan struct{}, 4)}
	remote.start(t)
	t.Cleanup(remote.kill)
	model := newScriptedLLM(t,
		scriptStep{action: "mcp.remote.slow", params: map[string]any{}},
		scriptStep{action: "workflow.complete", fields: []map[string]any{{"name": "message", "type": "string", "required": true}}, params: map[string]any{"message": "the tool failed"}},
		scriptStep{action: "mcp.remote.quick", params: map[string]any{}},
	)
	g := startMCPGateway(t, model, "mcpServers:\n  - name: remote\n    url: http://"+remote.addr+"/mcp\n    timeout: 60s\n")
	if status, check := g.readiness(t, "remote"); status != "ok" || check != "ok" {
		t.Fatalf("readyz before the kill = %s, mcp.remote %q\n%s", status, check, g.stderr)
	}

	var wf wfView
	g.expect(t, http.StatusCreated, "POST", "/api/v1/workflows", gwAlice, map[string]any{"prompt": "call the slow tool"}, &wf)
	select {
	case <-remote.entered:
	case <-time.After(30 * time.Second):
		t.Fatalf("the slow tool was never called\n%s", g.stderr)
	}
	remote.kill()
	if w := g.waitDone(t, gwAlice, wf.ID); w.Status != "completed" {
		t.Fatalf("round 1 = %+v\n%s", w, g.stderr)
	}
	msgs := g.messages(t, gwAlice, wf.ID)
	if len(msgs) != 3 || msgs[1].Action != "mcp.remote.slow" || msgs[1].Status != "error" {
		t.Fatalf("messages = %+v", msgs)
	}
	prompts := model.stage1Prompts()
	if !strings.Contains(prompts[len(prompts)-1], "MCP server remote is unreachable") {
		t.Errorf("the next Stage 1 prompt does not say why the step failed:\n%s", prompts[len(prompts)-1])
	}
	g.expect(t, 200, "GET", "/healthz", "", nil, nil)
	waitUntil(t, func() bool { status, check := g.readiness(t, "remote"); return status == "degraded" && check != "ok" }, "readyz to report the server down")

	remote.start(t)
	waitUntil(t, func() bool { _, check := g.readiness(t, "remote"); return check == "ok" }, "the server to be reconnected")
	g.expect(t, http.StatusAccepted, "POST", "/api/v1/workflows/"+wf.ID+"/rounds", gwAlice, map[string]any{"prompt": "call the quick tool"}, nil)
	if w := g.waitDone(t, gwAlice, wf.ID); w.Status != "completed" {
		t.Fatalf("round 2 = %+v", w)
	}
	msgs = g.messages(t, gwAlice, wf.ID)
	if quick := msgs[len(msgs)-2]; quick.Action != "mcp.remote.quick" || quick.Status != "success" || quick.Text != "pong from remote" {
		t.Errorf("quick after the restart = %+v", quick)
	}
}

// waitUntil polls cond for up to 60 s (reconnects back off; the machine may
// be loaded).
func waitUntil(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
