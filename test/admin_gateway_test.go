package test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/twostep/twostep/adminv1"
	"github.com/twostep/twostep/redact"
)

// TestAdminOnGatewayBinary runs the admin routes on the real gateway
// binary (its own wiring, config file and OpenAI-compatible model server):
// the stored traces carry neither the OpenAI key nor a connection's header
// secret, though the user's prompt holds both; stage2 renders as recorded;
// replay leaves the workflow alone; the viewer page is served.
func TestAdminOnGatewayBinary(t *testing.T) {
	t.Parallel()
	const connSecret = "crm-header-MARKER-9f8e7d6c"
	cfg := filepath.Join(t.TempDir(), "gateway.yaml")
	yaml := "connections:\n  - user: alice\n    label: crm\n    kind: http\n    baseURL: https://crm.example.test\n" +
		"    headers:\n      X-Api-Key: ${E2E_CRM_KEY}\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, newFakeLLM(t), "GATEWAY_CONFIG="+cfg, "E2E_CRM_KEY="+connSecret)

	var wf wfView
	prompt := "leaky note: my key is " + gwAPIKey + ", the CRM header is " + connSecret + " and my token " + gwAlice
	g.expect(t, http.StatusCreated, "POST", "/api/v1/workflows", gwAlice, map[string]any{"prompt": prompt}, &wf)
	if done := g.waitDone(t, gwAlice, wf.ID); done.Status != "completed" {
		t.Fatalf("workflow ended %s (%s)", done.Status, done.Error)
	}

	status, _, raw := g.send(t, "GET", "/admin/v1/workflows/"+wf.ID+"/traces", gwAdmin, nil)
	if status != http.StatusOK {
		t.Fatalf("traces: %d %s", status, raw)
	}
	for _, marker := range []string{gwAPIKey, connSecret, gwAlice, "MARKER"} {
		if strings.Contains(string(raw), marker) {
			t.Errorf("a stored trace carries %q", marker)
		}
	}
	if !strings.Contains(string(raw), "my key is "+redact.Redacted+", the CRM header is "+redact.Redacted) {
		t.Errorf("the Stage 1 prompt does not show the redacted user prompt")
	}

	var traces adminv1.TraceList
	g.expect(t, http.StatusOK, "GET", "/admin/v1/workflows/"+wf.ID+"/traces", gwAdmin, nil, &traces)
	lastStage2 := -1
	for i, tr := range traces.Traces {
		if tr.Stage == "stage2" {
			lastStage2 = i
		}
	}
	if lastStage2 < 0 {
		t.Fatalf("no stage2 trace among %d", len(traces.Traces))
	}
	var rendered adminv1.RenderResult
	g.expect(t, http.StatusOK, "POST", "/admin/v1/workflows/"+wf.ID+"/render", gwAdmin, map[string]any{"stage": "stage2"}, &rendered)
	if diff := cmp.Diff(traces.Traces[lastStage2].Prompt, rendered.Prompt); diff != "" {
		t.Errorf("stage2 render differs from the last stage2 trace (-trace +render):\n%s", diff)
	}

	before := g.adminState(t, wf.ID)
	var replay adminv1.ReplayResult
	g.expect(t, http.StatusOK, "POST", "/admin/v1/traces/"+traces.Traces[lastStage2].ID+"/replay", gwAdmin, nil, &replay)
	if replay.Error != "" || !strings.Contains(replay.Response, "parameters_v1") {
		t.Errorf("replay: response %q error %q", replay.Response, replay.Error)
	}
	if diff := cmp.Diff(before, g.adminState(t, wf.ID)); diff != "" {
		t.Errorf("replay changed the workflow (-before +after):\n%s", diff)
	}

	if s, _, _ := g.send(t, "POST", "/admin/v1/workflows/"+wf.ID+"/render", gwAlice, map[string]any{"stage": "stage1"}); s != http.StatusForbidden {
		t.Errorf("user token on render: %d, want 403", s)
	}
	status, hdr, page := g.send(t, "GET", "/admin/", "", nil)
	if status != http.StatusOK || !strings.Contains(string(page), "app.js") || !strings.HasPrefix(hdr.Get("Content-Type"), "text/html") {
		t.Errorf("GET /admin/: %d %q", status, hdr.Get("Content-Type"))
	}
}

// adminState is the workflow, its messages and traces as the admin API
// shows them.
func (g *gateway) adminState(t *testing.T, id string) []string {
	t.Helper()
	var out []string
	for _, p := range []string{"", "/messages", "/traces"} {
		status, _, data := g.send(t, "GET", "/admin/v1/workflows/"+id+p, gwAdmin, nil)
		if status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", p, status, data)
		}
		out = append(out, string(data))
	}
	return out
}
