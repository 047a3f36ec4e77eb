package test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAdminRenderAmplificationRefused: an admin render whose override
// template repeats {{KEY:USER_PROMPT}} 10,800 times on a workflow with a
// 19 KB prompt (206 MB rendered) is a short 422 naming the limit, and the
// gateway's peak RSS hardly moves (before the cap: a 206 MB answer and
// +1 GB RSS).
func TestAdminRenderAmplificationRefused(t *testing.T) {
	g := startGatewayBin(t, plainGatewayBin, nil, nil, "LOG_LEVEL=warn")
	pid := g.cmd.Process.Pid
	var wf wfView
	g.expect(t, http.StatusCreated, "POST", "/api/v1/workflows", gwAlice, map[string]any{"prompt": strings.Repeat("long prompt ", 1600)}, &wf)
	g.waitDone(t, gwAlice, wf.ID) // no model: the round fails, the workflow stays
	base := procKB(t, pid, "VmHWM")
	tmpl := "--- system ---\nrender me\n--- user ---\n" + strings.Repeat("{{KEY:USER_PROMPT}}", 10800) + "\n"
	status, _, body := g.send(t, "POST", "/admin/v1/workflows/"+wf.ID+"/render", gwAdmin, map[string]any{"stage": "stage1", "template": tmpl})
	if status != http.StatusUnprocessableEntity || !strings.Contains(string(body), "too large") || len(body) > 4096 {
		t.Errorf("render: %d with %d bytes, want a short 422 saying the prompt is too large: %.300s", status, len(body), body)
	}
	peak := procKB(t, pid, "VmHWM")
	t.Logf("peak RSS %d kB before the render, %d kB after", base, peak)
	if grew := (peak - base) << 10; grew > 48<<20 {
		t.Errorf("peak RSS grew by %d MiB, want at most 48", grew>>20)
	}
}

// TestOversizePromptFailsTheRoundExplained: a real call whose Stage 1
// template (an operator's override) renders over the cap is never sent:
// the round fails with an error that says the prompt is too large.
func TestOversizePromptFailsTheRoundExplained(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src, err := os.ReadFile("../templates/stage1.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	over := strings.Replace(string(src), "{{KEY:USER_PROMPT}}", strings.Repeat("{{KEY:USER_PROMPT}}", 300), 1)
	if err := os.WriteFile(filepath.Join(dir, "stage1.tmpl"), []byte(over), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "gateway.yaml")
	if err := os.WriteFile(cfg, []byte("templates:\n  overrideDir: "+dir+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	model := newFakeLLM(t)
	g := startGateway(t, model, "GATEWAY_CONFIG="+cfg, "LOG_LEVEL=warn")
	var wf wfView
	g.expect(t, http.StatusCreated, "POST", "/api/v1/workflows", gwAlice, map[string]any{"prompt": strings.Repeat("long prompt ", 1600)}, &wf)
	done := g.waitDone(t, gwAlice, wf.ID)
	if done.Status != "failed" || !strings.Contains(done.Error, "too large") {
		t.Errorf("workflow %s: %q, want failed saying the prompt is too large", done.Status, done.Error)
	}
	if n, _ := model.stats(); n != 0 {
		t.Errorf("the model got %d calls, want none", n)
	}
}
