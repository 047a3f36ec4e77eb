package test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// experimentView is what these tests read of GET /admin/v1/experiments/{id}.
type experimentView struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Calls  []struct {
		Step      int    `json:"step"`
		Error     string `json:"error"`
		Agreement struct {
			All bool `json:"all"`
		} `json:"agreement"`
	} `json:"calls"`
	Totals struct{ Calls, Agreed int } `json:"totals"`
}

// recordWorkflows runs one two-step workflow (a generated note, then the
// answer) per tag and returns their ids.
func recordWorkflows(t *testing.T, g *gateway, tags ...string) []string {
	t.Helper()
	var ids []string
	for _, tag := range tags {
		var wf wfView
		g.expect(t, http.StatusCreated, "POST", "/api/v1/workflows", gwAlice, map[string]any{"prompt": tag + " write a note"}, &wf)
		if done := g.waitDone(t, gwAlice, wf.ID); done.Status != "completed" {
			t.Fatalf("recorded workflow %s: %+v", tag, done)
		}
		ids = append(ids, wf.ID)
	}
	return ids
}

// stage2Without is the gateway's Stage 2 template without its parameters
// context: the model no longer sees what to fill.
func stage2Without(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "templates", "stage2.tmpl"))
	if err != nil {
		t.Fatal(err)
	}
	out := strings.Replace(string(b), "# Parameters context\n{{KEY:PARAMETERS_CONTEXT}}\n", "", 1)
	if out == string(b) {
		t.Fatal("the stage2 template has no parameters context to drop")
	}
	file := filepath.Join(t.TempDir(), "stage2.tmpl")
	if err := os.WriteFile(file, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestCLIExperimentGates: `twostep experiment` exits 0 when the calls
// agree at least as often as --min-agreement asks, 1 below it, 2 on a
// usage error; its table marks the parameters that disagree.
func TestCLIExperimentGates(t *testing.T) {
	t.Parallel()
	g := startGateway(t, newFakeLLM(t))
	ids := recordWorkflows(t, g, "gate1", "gate2")
	args := []string{"experiment", "--stage", "stage2", "--workflow", ids[0], "--workflow", ids[1]}

	out, errOut, code := cli(t, g, gwAdmin, append(args, "--min-agreement", "1")...)
	if code != 0 || !strings.Contains(out, "4 of 4 calls agree (100.0%)") {
		t.Fatalf("unchanged template: exit %d\n%s\n%s", code, out, errOut)
	}
	// Another model, built as a YAML models: entry is: the environment's
	// key and endpoint (the same fake server), the model named.
	out, errOut, code = cli(t, g, gwAdmin, append(args, "--model", "openai/other-model", "--json", "--min-agreement", "1")...)
	if code != 0 || strings.Count(out, `"model": "openai/other-model"`) != 4 {
		t.Fatalf("another model: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, errOut, code := cli(t, g, gwAdmin, append(args, "--model", "nope/x")...); code != 1 || !strings.Contains(errOut, "LLM_PROVIDER must be one of") {
		t.Errorf("an unknown provider: exit %d, %s", code, errOut)
	}
	dropped := append(args, "--template", "stage2="+stage2Without(t), "--min-agreement", "0.5")
	out, errOut, code = cli(t, g, gwAdmin, dropped...)
	if code != 1 || !strings.Contains(out, "0 of 4 calls agree") || !strings.Contains(out, "!message") ||
		!strings.Contains(errOut, "below --min-agreement 0.5") {
		t.Fatalf("template without the context: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, `recorded: {"message":"final answer for gate1"}`) || !strings.Contains(out, `new:      {"message":"final answer for none"}`) {
		t.Errorf("the table does not show the recorded and new parameters:\n%s", out)
	}
	for _, bad := range [][]string{
		{"experiment", "--stage", "plan"},
		{"experiment", "--stage", "stage2", "--min-agreement", "2"},
		{"experiment", "--stage", "stage2", "--template", "stage2"},
		{"experiment", "--stage", "stage2", "--workflow", ids[0], "--since", "24h"},
	} {
		if _, errOut, code := cli(t, g, gwAdmin, bad...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (usage)\n%s", bad, code, errOut)
		}
	}
	if _, errOut, code := cli(t, g, gwAlice, args...); code != 1 || !strings.Contains(errOut, "403") && !strings.Contains(errOut, "admin") {
		t.Errorf("a user's token: exit %d, %s", code, errOut)
	}
}

// TestKilledInstancesExperimentIsFinished: an experiment whose instance is
// killed (SIGKILL) while a call hangs is finished by another instance
// sharing the Redis once the lease expires, within a bounded time.
func TestKilledInstancesExperimentIsFinished(t *testing.T) {
	t.Parallel()
	testKilledInstancesExperimentIsFinished(t, redisURL(t))
}

// TestKilledInstancesExperimentIsFinishedOnCluster is the same on the Redis
// Cluster at REDIS_CLUSTER_URL.
func TestKilledInstancesExperimentIsFinishedOnCluster(t *testing.T) {
	t.Parallel()
	testKilledInstancesExperimentIsFinished(t, clusterURL(t))
}

func testKilledInstancesExperimentIsFinished(t *testing.T, url string) {
	conf := filepath.Join(t.TempDir(), "gateway.yaml")
	if err := os.WriteFile(conf, []byte("limits:\n  leaseTTL: 1s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	model := newFakeLLM(t)
	victim := launch(t, model, "REDIS_URL="+url, "GATEWAY_CONFIG="+conf)
	waitHealthy(t, victim)
	ids := recordWorkflows(t, victim, "exkill1")
	model.blockNext("op=generate key=exkill1")
	var started struct{ ID string }
	victim.expect(t, http.StatusAccepted, "POST", "/admin/v1/experiments", gwAdmin,
		map[string]any{"stage": "stage2", "workflows": ids}, &started)
	model.waitBlocked(t, 1)
	survivor := startGateway(t, model, "REDIS_URL="+url, "GATEWAY_CONFIG="+conf)
	if err := victim.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-victim.done
	killed := time.Now()
	var e experimentView
	for deadline := killed.Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		survivor.expect(t, http.StatusOK, "GET", "/admin/v1/experiments/"+started.ID, gwAdmin, nil, &e)
		if e.Status != "running" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("experiment still running 20 s after the kill: %+v\n%s", e, survivor.stderr)
		}
	}
	t.Logf("experiment finished by the survivor %v after SIGKILL (leaseTTL 1s)", time.Since(killed).Round(10*time.Millisecond))
	if e.Status != "completed" || e.Totals.Calls != 2 || e.Totals.Agreed != 2 {
		t.Fatalf("after the kill: %+v", e)
	}
	if !strings.Contains(survivor.stderr.String(), "experiment taken over") {
		t.Errorf("the survivor did not log the takeover:\n%s", survivor.stderr)
	}
	// The dataset of the same calls, read back from Redis: one line per
	// accepted Stage 2 call, with the inputs its prompt was rendered from.
	status, hdr, body := survivor.send(t, "GET", "/admin/v1/datasets?stage=stage2", gwAdmin, nil)
	lines := strings.Split(strings.TrimSpace(string(body)), "\n")
	if status != http.StatusOK || hdr.Get("Content-Type") != "application/jsonl" || len(lines) != 2 {
		t.Fatalf("dataset: %d %q, %d lines:\n%s", status, hdr.Get("Content-Type"), len(lines), body)
	}
	for _, l := range lines {
		var line struct {
			WorkflowID string            `json:"workflowId"`
			Inputs     map[string]string `json:"inputs"`
			Output     map[string]any    `json:"output"`
		}
		if err := jsonUnmarshal([]byte(l), &line); err != nil || line.WorkflowID != ids[0] ||
			!strings.Contains(line.Inputs["PARAMETERS_CONTEXT"], "key=exkill1") || line.Output == nil {
			t.Errorf("dataset line %s (%v)", l, err)
		}
	}
}
