package test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// cli runs the twostep command against g as token and returns its
// stdout, stderr and exit code.
func cli(t *testing.T, g *gateway, token string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, twostepBin, args...)
	cmd.Env = binEnv("TWOSTEP_URL="+g.url, "TWOSTEP_TOKEN="+token)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("twostep %v: %v", args, err)
	}
	if strings.Contains(out.String()+errb.String(), token) && token != "" {
		t.Errorf("twostep %v printed the token", args)
	}
	return out.String(), errb.String(), code
}

// TestCLIRunAndInspect: run prints the final answer on stdout with exit 0
// and each step's progress on stderr; --json output parses; list, show,
// events and download read the same workflow; delete removes it.
func TestCLIRunAndInspect(t *testing.T) {
	t.Parallel()
	g := startGateway(t, newFakeLLM(t))
	notes := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(notes, []byte("Quarterly notes: revenue up 12%."), 0o600); err != nil {
		t.Fatal(err)
	}

	out, errOut, code := cli(t, g, gwAlice, "run", "cli1 summarise the notes", "--file", notes, "--max-steps", "5")
	if code != 0 || out != "final answer for cli1\n" {
		t.Fatalf("run: exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "step 1: document.extract success") || !strings.Contains(errOut, "completed") {
		t.Errorf("run's progress on stderr:\n%s", errOut)
	}

	out, errOut, code = cli(t, g, gwAlice, "run", "--json", "cli2 write a note")
	var res struct {
		ID       string `json:"id"`
		Status   string `json:"status"`
		MaxSteps int    `json:"maxSteps"`
		Messages []struct {
			Role      string `json:"role"`
			Text      string `json:"text"`
			Documents []struct {
				ID, Name string
			} `json:"documents"`
		} `json:"messages"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 {
		t.Fatalf("run --json: exit %d, %v: %q\n%s", code, err, out, errOut)
	}
	if res.Status != "completed" || len(res.Messages) != 3 || res.Messages[2].Text != "final answer for cli2" || len(res.Messages[1].Documents) != 1 {
		t.Fatalf("run --json = %+v", res)
	}

	out, _, code = cli(t, g, gwAlice, "list", "--json", "--status", "completed")
	var page struct {
		Workflows []struct{ ID, Status string } `json:"workflows"`
	}
	if err := json.Unmarshal([]byte(out), &page); err != nil || code != 0 || len(page.Workflows) != 2 || page.Workflows[0].ID != res.ID {
		t.Errorf("list --json: exit %d, %v: %s", code, err, out)
	}
	out, _, _ = cli(t, g, gwAlice, "list", "--all", "--limit", "1", "--json")
	if err := json.Unmarshal([]byte(out), &page); err != nil || len(page.Workflows) != 2 {
		t.Errorf("list --all --limit 1: %v: %s", err, out)
	}
	if out, _, _ := cli(t, g, gwAlice, "list"); !strings.Contains(out, res.ID+"\tcompleted") {
		t.Errorf("list:\n%s", out)
	}
	if out, _, code := cli(t, g, gwAlice, "show", res.ID); code != 0 || !strings.Contains(out, "status completed") ||
		!strings.Contains(out, "assistant: final answer for cli2") || !strings.Contains(out, "step 1: document.generate success") {
		t.Errorf("show: exit %d:\n%s", code, out)
	}

	out, _, code = cli(t, g, gwAlice, "events", "--json", res.ID)
	var types []string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var ev struct{ Type, ID string }
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("events --json line %q: %v", sc.Text(), err)
		}
		types = append(types, ev.Type+ev.ID)
	}
	if code != 0 || strings.Join(types, ",") != "message1,message2,message3,status" {
		t.Errorf("events --json: exit %d, events %v", code, types)
	}

	doc := res.Messages[1].Documents[0]
	dest := filepath.Join(t.TempDir(), "note.txt")
	if _, errOut, code := cli(t, g, gwAlice, "download", res.ID, doc.ID, "-o", dest); code != 0 {
		t.Errorf("download: exit %d: %s", code, errOut)
	}
	if data, err := os.ReadFile(dest); err != nil || string(data) != "generated for cli2" {
		t.Errorf("downloaded %q, %v", data, err)
	}
	if out, _, code := cli(t, g, gwAlice, "download", res.ID, doc.ID); code != 0 || out != "generated for cli2" {
		t.Errorf("download to stdout: exit %d, %q", code, out)
	}

	if _, errOut, code := cli(t, g, gwBob, "show", res.ID); code != 1 || !strings.Contains(errOut, "404") {
		t.Errorf("bob's show: exit %d, stderr %q; want 1 with the 404", code, errOut)
	}
	if out, _, code := cli(t, g, gwAlice, "delete", res.ID); code != 0 || !strings.Contains(out, "deleted") {
		t.Errorf("delete: exit %d %q", code, out)
	}
	if _, _, code := cli(t, g, gwAlice, "show", res.ID); code != 1 {
		t.Errorf("show after delete: exit %d, want 1", code)
	}
}

// TestCLIFailedRoundAndUsage: a round whose model is unreachable makes run
// exit 1 with the reason on stderr; a bad upload exits 1 with the field
// named; usage mistakes exit 2 before anything is sent.
func TestCLIFailedRoundAndUsage(t *testing.T) {
	t.Parallel()
	g := startGateway(t, nil) // the model server's port is closed
	out, errOut, code := cli(t, g, gwAlice, "run", "this cannot be answered")
	if code != 1 || out != "" || !strings.Contains(errOut, "failed") || !strings.Contains(errOut, "the round failed (llm_error)") || !strings.Contains(errOut, "could not be reached") {
		t.Errorf("failed round: exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	empty := filepath.Join(t.TempDir(), "..bad")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := cli(t, g, gwAlice, "run", "x", "--file", empty); code != 1 || !strings.Contains(errOut, "body.documents[0].name") {
		t.Errorf("bad upload: exit %d, stderr %q", code, errOut)
	}
	for _, args := range [][]string{
		{}, {"frobnicate"}, {"run"}, {"run", "a", "b"}, {"run", "x", "--file", "/nonexistent/file.pdf"},
		{"show"}, {"approve", "wf_x"}, {"approve", "wf_x", "apr_y", "--parameters", "[1]"}, {"list", "--limit", "x"},
		{"run", "x", "--max-steps", "0"}, {"run", "x", "--max-steps", "101"}, {"run", "x", "--mode", "bogus"},
	} {
		if _, errOut, code := cli(t, g, gwAlice, args...); code != 2 || errOut == "" {
			t.Errorf("twostep %q: exit %d, stderr %q; want 2 with a message", args, code, errOut)
		}
	}
	if page := listIDs(t, g, gwAlice); len(page) != 1 {
		t.Errorf("workflows after the usage errors: %v, want only the failed run", page)
	}
}

// TestCLIApproval: a round paused for an approval makes run exit 3 naming
// the approval and the commands to decide it; approve follows the round to
// its answer.
func TestCLIApproval(t *testing.T) {
	t.Parallel()
	crm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"created": true}`))
	}))
	t.Cleanup(crm.Close)
	llmSrv := httptest.NewServer(&connLLM{method: "POST"})
	t.Cleanup(llmSrv.Close)
	cfg := filepath.Join(t.TempDir(), "gateway.yaml")
	yaml := "connections:\n  - user: alice\n    label: crm\n    kind: http\n    baseURL: " + crm.URL + "/api\n" +
		"    description: the CRM\n    headers:\n      Authorization: Bearer ${E2E_CLI_SECRET}\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, nil, "OPENAI_BASE_URL="+llmSrv.URL+"/v1", "GATEWAY_CONFIG="+cfg, "E2E_CLI_SECRET=cli-secret-0123456789")

	_, errOut, code := cli(t, g, gwAlice, "run", "create the CRM account")
	m := regexp.MustCompile(`twostep approve (wf_\w+) (apr_\w+)`).FindStringSubmatch(errOut)
	if code != 3 || m == nil || !strings.Contains(errOut, "http.request") {
		t.Fatalf("paused run: exit %d, stderr:\n%s", code, errOut)
	}
	out, errOut, code := cli(t, g, gwAlice, "approve", m[1], m[2], "--comment", "ok")
	if code != 0 || out != "done\n" {
		t.Errorf("approve: exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "step 1: http.request success") {
		t.Errorf("approve's progress lacks the approved step:\n%s", errOut)
	}
	if _, errOut, code := cli(t, g, gwAlice, "reject", m[1], m[2]); code != 1 || !strings.Contains(errOut, "409") {
		t.Errorf("a second decision: exit %d, stderr %q; want 1 with the 409", code, errOut)
	}
}

// TestCLIRoundOnBusy: round --on-busy=enqueue while a round hangs queues
// the round (printed with the round it will run as), which runs once the
// hanging round ends.
func TestCLIRoundOnBusy(t *testing.T) {
	t.Parallel()
	model := newFakeLLM(t)
	model.blockNext("clib1")
	g := startGateway(t, model)
	var wf wfView
	g.expect(t, http.StatusCreated, "POST", "/api/v1/workflows", gwAlice, map[string]any{"prompt": "clib1 go"}, &wf)
	model.waitBlocked(t, 1)
	if _, errOut, code := cli(t, g, gwAlice, "round", wf.ID, "clib2 go", "--wait=false"); code != 1 || !strings.Contains(errOut, "409") && !strings.Contains(strings.ToLower(errOut), "running") {
		t.Errorf("round while one runs: exit %d, stderr %q; want a refusal", code, errOut)
	}
	out, errOut, code := cli(t, g, gwAlice, "round", wf.ID, "clib2 go", "--on-busy=enqueue", "--wait=false")
	if code != 0 || out != wf.ID+"\trunning\tround 1\tqueued as round 2\n" {
		t.Fatalf("round --on-busy=enqueue: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	model.releaseBlocked()
	if done := g.waitDone(t, gwAlice, wf.ID); done.Status != "completed" || done.Round != 2 || len(done.QueuedRounds) != 0 {
		t.Errorf("after the hanging round: %+v, want round 2 completed", done)
	}
}
