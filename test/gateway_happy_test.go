package test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/twostep/twostep/client"
)

// TestHappyPath drives one workflow over HTTP: create with a document, the
// event stream, messages, document download, then a second round.
func TestHappyPath(t *testing.T) {
	t.Parallel()
	testHappyPath(t)
}

// TestHappyPathOnCluster is TestHappyPath with the store on the Redis
// Cluster at REDIS_CLUSTER_URL.
func TestHappyPathOnCluster(t *testing.T) {
	t.Parallel()
	testHappyPath(t, "REDIS_URL="+clusterURL(t))
}

func testHappyPath(t *testing.T, env ...string) {
	model := newFakeLLM(t)
	g := startGateway(t, model, env...)
	notes := "Quarterly notes: revenue up 12%.\nRisk: supplier delay.\n"

	var wf wfView
	g.expect(t, http.StatusCreated, "POST", "/api/v1/workflows", gwAlice, map[string]any{
		"prompt": "happy1 summarise the notes", "maxSteps": 5,
		"documents": []map[string]string{{"name": "notes.txt", "mimeType": "text/plain", "content": base64.StdEncoding.EncodeToString([]byte(notes))}},
	}, &wf)
	if wf.Status != "running" || wf.Round != 1 || wf.UserID != "alice" || wf.MaxSteps != 5 {
		t.Fatalf("created workflow = %+v", wf)
	}

	var roles []string
	var lastStatus *client.Workflow
	for _, e := range g.events(t, gwAlice, wf.ID, 0) {
		switch e.Type {
		case "message":
			if e.ID != itoa(e.Message.Seq) {
				t.Errorf("message event id %q, seq %d", e.ID, e.Message.Seq)
			}
			roles = append(roles, e.Message.Role+":"+e.Message.Action)
		case "status":
			lastStatus = e.Workflow
		}
	}
	if got := strings.Join(roles, ","); got != "user:,action:document.extract,assistant:" {
		t.Errorf("event messages = %s", got)
	}
	if lastStatus == nil || lastStatus.Status != "completed" || lastStatus.StopReason != "completed" {
		t.Errorf("last status event = %+v", lastStatus)
	}
	if replay := g.events(t, gwAlice, wf.ID, 2); len(replay) != 2 || replay[0].ID != "3" || replay[1].Type != "status" {
		t.Errorf("replay after Last-Event-ID 2 = %+v, want message 3 then status", replay)
	}

	msgs := g.messages(t, gwAlice, wf.ID)
	if len(msgs) != 3 {
		t.Fatalf("messages = %+v", msgs)
	}
	user, action, final := msgs[0], msgs[1], msgs[2]
	if user.Role != "user" || user.DocumentsLabel != "round1_user_context" || len(user.Documents) != 1 {
		t.Errorf("user message = %+v", user)
	}
	if action.Status != "success" || action.Summary == "" || len(action.Documents) != 1 {
		t.Errorf("action message = %+v", action)
	}
	if final.Role != "assistant" || final.Text != "final answer for happy1" {
		t.Errorf("assistant message = %+v", final)
	}
	status, hdr, body := g.send(t, "GET", "/api/v1/workflows/"+wf.ID+"/documents/"+user.Documents[0].ID, gwAlice, nil)
	if status != 200 || string(body) != notes || !strings.HasPrefix(hdr.Get("Content-Type"), "text/plain") {
		t.Errorf("download: %d %q %q", status, hdr.Get("Content-Type"), body)
	}
	_, _, extracted := g.send(t, "GET", "/api/v1/workflows/"+wf.ID+"/documents/"+action.Documents[0].ID, gwAlice, nil)
	if !strings.Contains(string(extracted), "revenue up 12%") {
		t.Errorf("extracted document = %q", extracted)
	}

	var w2 wfView
	g.expect(t, http.StatusAccepted, "POST", "/api/v1/workflows/"+wf.ID+"/rounds", gwAlice,
		map[string]any{"prompt": "happy2 now write a note"}, &w2)
	if w2.Round != 2 || w2.Status != "running" {
		t.Errorf("second round = %+v", w2)
	}
	done := g.waitDone(t, gwAlice, wf.ID)
	if done.Status != "completed" || done.Round != 2 {
		t.Errorf("after round 2: %+v", done)
	}
	msgs = g.messages(t, gwAlice, wf.ID)
	if len(msgs) != 6 || msgs[3].Round != 2 || msgs[4].Action != "document.extract" || msgs[5].Text != "final answer for happy2" {
		t.Errorf("round 2 messages = %+v", msgs[3:])
	}
	var after struct {
		Messages []msgView `json:"messages"`
	}
	g.expect(t, 200, "GET", "/api/v1/workflows/"+wf.ID+"/messages?after=4", gwAlice, nil, &after)
	if len(after.Messages) != 2 || after.Messages[0].Seq != 5 {
		t.Errorf("?after=4 = %+v", after.Messages)
	}
	if _, bad := model.stats(); bad != 0 {
		t.Errorf("%d model calls without the configured API key", bad)
	}
	if status, _, _ := g.send(t, "GET", "/metrics", "", nil); status != http.StatusUnauthorized {
		t.Errorf("/metrics without a token: %d, want 401", status)
	}
	if status, _, _ := g.send(t, "GET", "/metrics", gwAdmin, nil); status != http.StatusUnauthorized {
		t.Errorf("/metrics with an admin token: %d, want 401 (it has a token of its own)", status)
	}
	_, _, metrics := g.send(t, "GET", "/metrics", gwMetrics, nil)
	for _, want := range []string{`twostep_rounds_total{outcome="completed"} 2`, `twostep_model_calls_total{outcome="ok",stage="stage1"}`} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	g.expect(t, http.StatusNoContent, "DELETE", "/api/v1/workflows/"+wf.ID, gwAlice, nil, nil)
	for _, p := range []string{"", "/messages", "/documents/" + user.Documents[0].ID, "/documents/" + action.Documents[0].ID} {
		g.expect(t, http.StatusNotFound, "GET", "/api/v1/workflows/"+wf.ID+p, gwAlice, nil, nil)
	}
	if ids := listIDs(t, g, gwAlice); len(ids) != 0 {
		t.Errorf("list after delete: %v", ids)
	}
}

// TestRunningRoundsPerUser: beyond the per-user limit (default 4) a new
// round answers 429 with Retry-After; another user is not affected.
func TestRunningRoundsPerUser(t *testing.T) {
	t.Parallel()
	model := newFakeLLM(t)
	g := startGateway(t, model)
	for i := range 5 {
		model.blockNext(fmt.Sprintf("limit%d", i))
	}
	for i := range 4 {
		g.expect(t, http.StatusCreated, "POST", "/api/v1/workflows", gwAlice, map[string]any{"prompt": fmt.Sprintf("limit%d go", i)}, nil)
	}
	status, hdr, body := g.send(t, "POST", "/api/v1/workflows", gwAlice, map[string]any{"prompt": "limit9 go"})
	if status != http.StatusTooManyRequests || hdr.Get("Retry-After") == "" || hdr.Get("Content-Type") != "application/problem+json" {
		t.Errorf("fifth running round: %d Retry-After=%q %s", status, hdr.Get("Retry-After"), body)
	}
	g.expect(t, http.StatusCreated, "POST", "/api/v1/workflows", gwBob, map[string]any{"prompt": "limit4 go"}, nil)
}

// TestStopConflictResume blocks the model mid-round: a new round is 409,
// stop cancels the in-flight call, resume finishes the round.
func TestStopConflictResume(t *testing.T) {
	t.Parallel()
	model := newFakeLLM(t)
	g := startGateway(t, model)
	model.blockNext("blocker1")
	var wf wfView
	g.expect(t, http.StatusCreated, "POST", "/api/v1/workflows", gwAlice, map[string]any{"prompt": "blocker1 do it"}, &wf)
	model.waitBlocked(t, 1)
	g.expect(t, http.StatusConflict, "POST", "/api/v1/workflows/"+wf.ID+"/rounds", gwAlice, map[string]any{"prompt": "again"}, nil)
	var stopped wfView
	g.expect(t, http.StatusOK, "POST", "/api/v1/workflows/"+wf.ID+"/stop", gwAlice, nil, &stopped)
	if stopped.Status != "stopped" || stopped.StopReason != "stopped" {
		t.Errorf("stop answered %+v", stopped)
	}
	model.waitCancelled(t, 1) // stop cancels the in-flight model call
	g.expect(t, http.StatusConflict, "POST", "/api/v1/workflows/"+wf.ID+"/stop", gwAlice, nil, nil)
	g.expect(t, http.StatusAccepted, "POST", "/api/v1/workflows/"+wf.ID+"/resume", gwAlice, nil, nil)
	if done := g.waitDone(t, gwAlice, wf.ID); done.Status != "completed" {
		t.Errorf("after resume: %+v", done)
	}
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
