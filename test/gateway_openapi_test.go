package test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// prism runs Stoplight Prism's mock server (`prism mock`) on doc at a free
// loopback port and returns its base URL once it answers; it is stopped
// when the test ends. Prism is a real OpenAPI mock nobody here wrote: it
// validates each request against the document and answers the document's
// examples (Prefer: code=404 picks a response by status).
func prism(t *testing.T, doc string) string {
	t.Helper()
	bin := os.Getenv("TWOSTEP_PRISM")
	if bin == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("CI needs TWOSTEP_PRISM (the path of @stoplight/prism-cli's prism; .ci/run installs it)")
		}
		t.Skip("set TWOSTEP_PRISM to @stoplight/prism-cli's node_modules/.bin/prism to run")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "mock", "--host", "127.0.0.1", "--port", fmt.Sprint(port), "--dynamic=false", "--errors=false", doc)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start prism: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(base + "/tickets")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prism did not answer at %s: %v\n%s", base, err, out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestOpenAPIActionsAgainstPrism runs the built gateway against Prism
// serving test/testdata/tickets-openapi.yaml: Stage 1 picks operations,
// Stage 2 fills their query, path and body parameters, replies reach the
// messages and the next Stage 1 prompt, a write operation waits for
// approval, and 404 and 422 replies become failed steps. The source's
// secret header never shows in prompts, messages or logs.
func TestOpenAPIActionsAgainstPrism(t *testing.T) {
	t.Parallel()
	doc, err := filepath.Abs(filepath.Join("testdata", "tickets-openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	base := prism(t, doc)
	const secret = "tickets-e2e-token-7c1d93a5"
	field := func(name, typ string) map[string]any {
		return map[string]any{"name": name, "type": typ, "required": true}
	}
	complete := func(msg string) scriptStep {
		return scriptStep{action: "workflow.complete", fields: []map[string]any{field("message", "string")}, params: map[string]any{"message": msg}}
	}
	model := newScriptedLLM(t,
		scriptStep{action: "tickets.listTickets", fields: []map[string]any{field("status", "string"), field("assignee", "string")},
			params: map[string]any{"status": "open", "assignee": "ada"}},
		scriptStep{action: "missing.getTicket", fields: []map[string]any{field("ticketId", "number")}, params: map[string]any{"ticketId": 999}},
		complete("Ada has two open tickets; ticket 999 does not exist."),
		scriptStep{action: "tickets.createTicket", fields: []map[string]any{field("body", "object")},
			params: map[string]any{"body": map[string]any{"title": "Keyboard missing keys", "assignee": "bob"}}},
		scriptStep{action: "rejecting.createTicket", fields: []map[string]any{field("body", "object")},
			params: map[string]any{"body": map[string]any{"title": "x"}}},
		complete("Ticket 44 is open."),
	)
	yaml := fmt.Sprintf(`openapiActions:
  - name: tickets
    spec: %[1]s
    baseURL: %[2]s
    headers: {Authorization: "Bearer ${E2E_TICKETS_TOKEN}"}
  - name: missing
    spec: %[1]s
    baseURL: %[2]s
    include: [getTicket]
    headers: {Prefer: "code=404"}
  - name: rejecting
    spec: %[1]s
    baseURL: %[2]s
    include: [createTicket]
    headers: {Prefer: "code=422"}
approvals:
  actions: {rejecting.createTicket: never}
`, doc, base)
	path := filepath.Join(t.TempDir(), "gateway.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	g := launchWith(t, nil, nil, []string{"OPENAI_BASE_URL=" + model.url + "/v1", "GATEWAY_CONFIG=" + path, "LOG_LEVEL=debug", "E2E_TICKETS_TOKEN=" + secret})
	waitHealthy(t, g)
	t.Cleanup(func() {
		if err := g.stop(); err != nil {
			t.Errorf("gateway shutdown: %v\n%s", err, g.stderr)
		}
	})

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list, err := g.client(t, gwAlice).Actions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ops := map[string]string{}
	for _, a := range list {
		if a.Server != "" {
			ops[a.Name] = a.Server + " " + a.Effect + " " + a.HTTPMethod + " " + a.HTTPPath
		}
	}
	want := map[string]string{
		"tickets.listTickets": "tickets read GET /tickets", "tickets.getTicket": "tickets read GET /tickets/{ticketId}",
		"tickets.createTicket": "tickets write POST /tickets", "missing.getTicket": "missing read GET /tickets/{ticketId}",
		"rejecting.createTicket": "rejecting write POST /tickets",
	}
	for name, w := range want {
		if ops[name] != w {
			t.Errorf("%s = %q, want %q", name, ops[name], w)
		}
	}
	if _, ok := ops["tickets.attachFile"]; ok {
		t.Error("attachFile (an octet-stream body) is offered")
	}
	var ready struct {
		Status string
		Checks map[string]string
	}
	g.expect(t, http.StatusOK, "GET", "/readyz", "", nil, &ready)
	if ready.Checks["openapi.tickets"] != "ok" {
		t.Errorf("readyz = %+v", ready)
	}

	// Round 1: a read with query filters, then a 404.
	var wf wfView
	g.expect(t, http.StatusCreated, "POST", "/api/v1/workflows", gwAlice, map[string]any{"prompt": "list Ada's open tickets, then ticket 999"}, &wf)
	if w := g.waitDone(t, gwAlice, wf.ID); w.Status != "completed" {
		t.Fatalf("round 1 = %+v\n%s", w, g.stderr)
	}
	msgs := g.messages(t, gwAlice, wf.ID)
	if len(msgs) != 4 {
		t.Fatalf("round 1 messages = %+v\n%s", msgs, g.stderr)
	}
	if m := msgs[1]; m.Action != "tickets.listTickets" || m.Status != "success" || !strings.Contains(m.Text, `"title":"Printer on fire"`) {
		t.Errorf("listTickets message = %+v", m)
	}
	const notFound = "HTTP 404 from missing.getTicket: Not Found: no ticket has this id"
	if m := msgs[2]; m.Action != "missing.getTicket" || m.Status != "error" || !strings.Contains(m.Text, notFound) {
		t.Errorf("getTicket message = %+v", m)
	}
	prompts := model.stage1Prompts()
	if len(prompts) != 3 || !strings.Contains(prompts[1], "Printer on fire") || !strings.Contains(prompts[2], notFound) {
		t.Errorf("Stage 1 prompts do not show the replies:\n%s", strings.Join(prompts, "\n-----\n"))
	}

	// Round 2: a write waits for approval, then a 422.
	g.expect(t, http.StatusAccepted, "POST", "/api/v1/workflows/"+wf.ID+"/rounds", gwAlice, map[string]any{"prompt": "open a ticket for Bob's keyboard"}, nil)
	paused := g.waitDone(t, gwAlice, wf.ID)
	p := paused.PendingApproval
	if paused.Status != "awaiting_approval" || p == nil || p.Action != "tickets.createTicket" {
		t.Fatalf("round 2 = %s, pending %+v", paused.Status, p)
	}
	g.expect(t, http.StatusAccepted, "POST", "/api/v1/workflows/"+wf.ID+"/approvals/"+p.ID, gwAlice, map[string]any{"decision": "approve"}, nil)
	if w := g.waitDone(t, gwAlice, wf.ID); w.Status != "completed" {
		t.Fatalf("round 2 after approval = %+v", w)
	}
	msgs = g.messages(t, gwAlice, wf.ID)
	if len(msgs) != 8 {
		t.Fatalf("messages = %+v", msgs)
	}
	if m := msgs[5]; m.Action != "tickets.createTicket" || m.Status != "success" || !strings.Contains(m.Text, `"id":44`) {
		t.Errorf("createTicket message = %+v", m)
	}
	if m := msgs[6]; m.Action != "rejecting.createTicket" || m.Status != "error" ||
		!strings.Contains(m.Text, "HTTP 422 from rejecting.createTicket: Unprocessable ticket: the title must not be empty") {
		t.Errorf("rejected createTicket message = %+v", m)
	}
	var everything strings.Builder
	everything.WriteString(strings.Join(model.stage1Prompts(), "\n"))
	for _, m := range msgs {
		everything.WriteString(m.Text)
	}
	status, _, traces := g.send(t, "GET", "/admin/v1/workflows/"+wf.ID+"/traces", gwAdmin, nil)
	if status != http.StatusOK || len(traces) < 100 {
		t.Fatalf("traces = %d %s", status, traces)
	}
	everything.Write(traces)
	everything.WriteString(g.stderr.String())
	if strings.Contains(everything.String(), secret) {
		t.Error("the tickets token shows in a prompt, message, trace or log line")
	}
}

// TestStartupReportsOpenAPIDocumentProblems: problems of openapiActions
// documents stop the start, every source's at once, like other
// configuration problems.
func TestStartupReportsOpenAPIDocumentProblems(t *testing.T) {
	t.Parallel()
	doc, err := filepath.Abs(filepath.Join("testdata", "tickets-openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "gateway.yaml")
	yaml := "openapiActions:\n  - {name: crm, spec: crm-openapi.yaml, baseURL: http://127.0.0.1:1}\n" +
		"  - {name: tickets, spec: " + doc + ", baseURL: http://127.0.0.1:1, include: [getTicket, closeTicket]}\n"
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	g := launchArgs(t, []string{"GATEWAY_CONFIG=" + path})
	select {
	case <-g.done:
	case <-time.After(15 * time.Second):
		_ = g.cmd.Process.Kill()
		t.Fatal("the gateway kept running")
	}
	if code := g.cmd.ProcessState.ExitCode(); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	out := g.stderr.String()
	for _, want := range []string{
		"openapiActions crm: open " + filepath.Join(dir, "crm-openapi.yaml") + ": no such file",
		`openapiActions tickets: include names "closeTicket", which is no operation of the document`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stderr lacks %q:\n%s", want, out)
		}
	}
}
