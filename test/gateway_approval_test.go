package test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestWriteWaitsForApprovalAcrossInstances: a POST through http.request is
// never sent while its approval is pending; the round pauses with the
// approval in the workflow and the events stream; the decision, sent to a
// second instance sharing Redis, makes the POST go out exactly once, and
// a second decision is refused.
func TestWriteWaitsForApprovalAcrossInstances(t *testing.T) {
	t.Parallel()
	url := redisURL(t)
	var posts atomic.Int32
	crm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			posts.Add(1)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"created": true}`))
	}))
	t.Cleanup(crm.Close)
	model := &connLLM{method: "POST"}
	llmSrv := httptest.NewServer(model)
	t.Cleanup(llmSrv.Close)
	cfg := filepath.Join(t.TempDir(), "gateway.yaml")
	yaml := "connections:\n  - user: alice\n    label: crm\n    kind: http\n    baseURL: " + crm.URL + "/api\n" +
		"    description: the CRM\n    headers:\n      Authorization: Bearer ${E2E_APPROVAL_SECRET}\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"REDIS_URL=" + url, "OPENAI_BASE_URL=" + llmSrv.URL + "/v1", "GATEWAY_CONFIG=" + cfg,
		"E2E_APPROVAL_SECRET=approval-secret-0123456789"}
	g1 := startGateway(t, nil, env...)
	g2 := startGateway(t, nil, env...)

	var wf struct {
		ID              string
		Status          string
		PendingApproval *struct {
			ID, Action string
			Parameters map[string]any
			Connection string
		}
	}
	g1.expect(t, http.StatusCreated, "POST", "/api/v1/workflows", gwAlice, map[string]any{"prompt": "create the CRM account"}, &wf)
	// The event stream ends when the round pauses, with the approval.
	evs := g1.events(t, gwAlice, wf.ID, 0)
	if last := evs[len(evs)-1]; last.Type != "approval" || last.Approval.Action != "http.request" {
		t.Errorf("the events stream does not end with the approval: %+v", last)
	}
	g1.expect(t, http.StatusOK, "GET", "/api/v1/workflows/"+wf.ID, gwAlice, nil, &wf)
	p := wf.PendingApproval
	if wf.Status != "awaiting_approval" || p == nil || p.Action != "http.request" || p.Parameters["method"] != "POST" || p.Connection != "crm" {
		t.Fatalf("paused workflow = %s, pending approval %+v", wf.Status, p)
	}
	time.Sleep(300 * time.Millisecond) // time for a POST that should not happen
	if n := posts.Load(); n != 0 {
		t.Fatalf("the CRM got %d POSTs before any decision", n)
	}
	g2.expect(t, http.StatusAccepted, "POST", "/api/v1/workflows/"+wf.ID+"/approvals/"+p.ID, gwAlice,
		map[string]any{"decision": "approve", "comment": "ok"}, nil)
	if done := g2.waitDone(t, gwAlice, wf.ID); done.Status != "completed" {
		t.Fatalf("workflow ended %s (%s)", done.Status, done.Error)
	}
	if n := posts.Load(); n != 1 {
		t.Errorf("the CRM got %d POSTs after the approval, want exactly 1", n)
	}
	status, _, body := g1.send(t, "POST", "/api/v1/workflows/"+wf.ID+"/approvals/"+p.ID, gwAlice, map[string]any{"decision": "approve"})
	if status != http.StatusConflict {
		t.Errorf("a second decision answered %d %s, want 409", status, body)
	}
}

// TestApprovalExpiresOnTimeAcrossInstances: with limits.approvalTimeout 2s
// and two instances sharing Redis, an undecided approval is rejected as
// expired soon after its expiresAt — found through the store's approval
// index, not a once-a-minute listing of every workflow — exactly once, and
// the round goes on without the POST. The wait is bounded, not timed.
func TestApprovalExpiresOnTimeAcrossInstances(t *testing.T) {
	url := redisURL(t)
	var posts atomic.Int32
	crm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			posts.Add(1)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"created": true}`))
	}))
	t.Cleanup(crm.Close)
	llmSrv := httptest.NewServer(&connLLM{method: "POST"})
	t.Cleanup(llmSrv.Close)
	cfg := filepath.Join(t.TempDir(), "gateway.yaml")
	yaml := "limits:\n  approvalTimeout: 2s\nconnections:\n  - user: alice\n    label: crm\n    kind: http\n    baseURL: " + crm.URL + "/api\n" +
		"    description: the CRM\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"REDIS_URL=" + url, "OPENAI_BASE_URL=" + llmSrv.URL + "/v1", "GATEWAY_CONFIG=" + cfg}
	g1 := startGateway(t, nil, env...)
	startGateway(t, nil, env...)

	var wf wfView
	g1.expect(t, http.StatusCreated, "POST", "/api/v1/workflows", gwAlice, map[string]any{"prompt": "create the CRM account"}, &wf)
	if wf = g1.waitDone(t, gwAlice, wf.ID); wf.Status != "awaiting_approval" || wf.PendingApproval == nil {
		t.Fatalf("workflow = %s, pending approval %+v; want awaiting_approval", wf.Status, wf.PendingApproval)
	}
	expires := wf.PendingApproval.ExpiresAt
	for deadline := expires.Add(15 * time.Second); wf.Status == "awaiting_approval" && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		g1.expect(t, http.StatusOK, "GET", "/api/v1/workflows/"+wf.ID, gwAlice, nil, &wf)
	}
	if wf.Status == "awaiting_approval" {
		t.Fatalf("approval still pending %s after its expiresAt", time.Since(expires).Round(time.Second))
	}
	t.Logf("the approval left awaiting_approval %s after its expiresAt", time.Since(expires).Round(10*time.Millisecond))
	if done := g1.waitDone(t, gwAlice, wf.ID); done.Status != "completed" {
		t.Fatalf("workflow ended %s (%s), want completed after the expired step", done.Status, done.Error)
	}
	rejected := 0
	for _, m := range g1.messages(t, gwAlice, wf.ID) {
		if m.Status == "rejected" && strings.Contains(m.Summary, "expired") {
			rejected++
		}
	}
	if rejected != 1 || posts.Load() != 0 {
		t.Errorf("%d steps rejected as expired and %d POSTs, want 1 and 0", rejected, posts.Load())
	}
}
