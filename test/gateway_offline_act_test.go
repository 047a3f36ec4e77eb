package test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestOfflineModelActsThroughTheAPI is the README's offline walk-through on
// the built gateway: LLM_PROVIDER=scripted, an HTTP action with a write
// effect (so it waits for approval), a prompt with an @act line; the
// round pauses with the line's parameters, the approval runs the action
// against the local endpoint, and the round completes.
func TestOfflineModelActsThroughTheAPI(t *testing.T) {
	t.Parallel()
	var got atomic.Value
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got.Store(string(body))
		_, _ = io.WriteString(w, `{"text":"created ticket T-1"}`)
	}))
	defer svc.Close()
	file := filepath.Join(t.TempDir(), "gateway.yaml")
	yaml := "httpActions:\n  - name: tickets.create\n    description: Open a ticket\n    url: " + svc.URL + "\n" +
		"    effect: write\n    documents: none\n" +
		"    parameters: {type: object, properties: {title: {type: string}}, required: [title]}\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, nil, "LLM_PROVIDER=scripted", "GATEWAY_CONFIG="+file)

	var wf wfView
	prompt := "Open a ticket for the printer\n@act tickets.create {\"title\": \"Printer on fire\"}"
	g.expect(t, http.StatusCreated, "POST", "/api/v1/workflows", gwAlice, map[string]any{"prompt": prompt}, &wf)
	if wf.Status == "running" {
		wf = g.waitDone(t, gwAlice, wf.ID)
	}
	if wf.Status != "awaiting_approval" || wf.PendingApproval == nil || wf.PendingApproval.Action != "tickets.create" ||
		wf.PendingApproval.Parameters["title"] != "Printer on fire" {
		t.Fatalf("workflow = %+v, pending %+v; want it waiting on tickets.create", wf, wf.PendingApproval)
	}
	if got.Load() != nil {
		t.Fatal("the action ran before the approval")
	}
	g.expect(t, http.StatusAccepted, "POST", "/api/v1/workflows/"+wf.ID+"/approvals/"+wf.PendingApproval.ID, gwAlice,
		map[string]any{"decision": "approve"}, nil)
	deadline := time.Now().Add(15 * time.Second)
	for wf.Status != "completed" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		g.expect(t, http.StatusOK, "GET", "/api/v1/workflows/"+wf.ID, gwAlice, nil, &wf)
	}
	if wf.Status != "completed" {
		t.Fatalf("workflow ended %s (%s)", wf.Status, wf.Error)
	}
	var body struct{ Parameters map[string]any }
	if s, _ := got.Load().(string); json.Unmarshal([]byte(s), &body) != nil || body.Parameters["title"] != "Printer on fire" {
		t.Errorf("the action got %v", got.Load())
	}
	var roles []string
	for _, m := range g.messages(t, gwAlice, wf.ID) {
		roles = append(roles, strings.TrimSpace(m.Role+" "+m.Action+" "+m.Status))
	}
	if want := "user|action tickets.create success|assistant"; strings.Join(roles, "|") != want {
		t.Errorf("messages %q, want %q", roles, want)
	}
}

// TestStartupSaysHowToRunOffline: with no model configured the start-up
// log names LLM_PROVIDER=scripted; with the offline model it says nothing
// of the kind.
func TestStartupSaysHowToRunOffline(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		env  []string
		want bool
	}{
		{"no model", []string{"LLM_PROVIDER=", "OPENAI_API_KEY=", "OPENAI_BASE_URL=", "LLM_MODEL="}, true},
		{"offline model", []string{"LLM_PROVIDER=scripted"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := startGateway(t, nil, tt.env...)
			waitUntil(t, func() bool { return strings.Contains(g.stderr.String(), "gateway listening") }, "the listening line")
			if has := strings.Contains(g.stderr.String(), "LLM_PROVIDER=scripted"); has != tt.want {
				t.Errorf("log names LLM_PROVIDER=scripted: %v, want %v:\n%s", has, tt.want, g.stderr)
			}
		})
	}
}

// TestOfflineModelCallsAnMCPTool: with the offline model an @act line runs
// a tool of the reference MCP server (stdio) with the line's arguments.
func TestOfflineModelCallsAnMCPTool(t *testing.T) {
	t.Parallel()
	entry := os.Getenv("TWOSTEP_MCP_EVERYTHING")
	node, err := exec.LookPath("node")
	if entry == "" || err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("CI needs node and TWOSTEP_MCP_EVERYTHING (.ci/run installs it)")
		}
		t.Skip("set TWOSTEP_MCP_EVERYTHING to server-everything's dist/index.js (and have node) to run")
	}
	file := filepath.Join(t.TempDir(), "gateway.yaml")
	yaml := "mcpServers:\n  - name: everything\n    command: " + node + "\n    args: [" + entry + ", stdio]\n    timeout: 20s\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, nil, "LLM_PROVIDER=scripted", "GATEWAY_CONFIG="+file)
	var wf wfView
	g.expect(t, http.StatusCreated, "POST", "/api/v1/workflows", gwAlice,
		map[string]any{"prompt": "Echo it\n@act mcp.everything.echo {\"message\": \"offline hello\"}"}, &wf)
	if wf = g.waitDone(t, gwAlice, wf.ID); wf.Status != "completed" {
		t.Fatalf("workflow ended %s (%s)", wf.Status, wf.Error)
	}
	msgs := g.messages(t, gwAlice, wf.ID)
	if len(msgs) != 3 || msgs[1].Action != "mcp.everything.echo" || msgs[1].Status != "success" || !strings.Contains(msgs[1].Text, "offline hello") {
		t.Errorf("messages %+v, want the echo tool's answer", msgs)
	}
}
