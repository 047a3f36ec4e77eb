package httpapi

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/twostep/twostep/apiv1"
	"github.com/twostep/twostep/client"
	"github.com/twostep/twostep/workflow"
)

type sseEvent struct{ id, event, data string }

// parseSSE reads a recorded stream with the client's SSE reader, the one
// every caller of the API uses.
func parseSSE(t *testing.T, body string) []sseEvent {
	t.Helper()
	var out []sseEvent
	for ev, err := range client.ReadEvents(strings.NewReader(body)) {
		if err != nil {
			t.Fatalf("reading the stream: %v", err)
		}
		out = append(out, sseEvent{id: ev.ID, event: ev.Type, data: string(ev.Data)})
	}
	return out
}

// TestEventsStreamUntilRoundEnds advances a workflow on each store read and
// checks the stream sends every message once, in seq order, with its seq as
// the event id, then the final status, then ends.
func TestEventsStreamUntilRoundEnds(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, nil)
	w := testWorkflow("alice", workflow.StatusRunning)
	env.store.put(w, workflow.Message{ID: "m1", Role: workflow.RoleUser, Text: "hi"})
	env.store.onGet = func(s *fakeStore, id string) {
		switch s.gets {
		case 3:
			s.putLocked(s.wfs[id], workflow.Message{ID: "m2", Role: workflow.RoleAction, Action: "ai.process", Status: workflow.MessageSuccess})
		case 5:
			done := s.wfs[id].Clone()
			done.Status, done.StopReason, done.Step = workflow.StatusCompleted, workflow.StopCompleted, 2
			s.putLocked(done, workflow.Message{ID: "m3", Role: workflow.RoleAssistant, Text: "done"})
		}
	}
	rec := env.do(t, "GET", "/api/v1/workflows/"+w.ID+"/events", aliceToken, nil)
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, type %q: %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	events := parseSSE(t, rec.Body.String())
	var msgs, statuses []string
	for _, e := range events {
		switch e.event {
		case "message":
			var m apiv1.MessageView
			if err := json.Unmarshal([]byte(e.data), &m); err != nil {
				t.Fatal(err)
			}
			if e.id == "" || e.id != jsonNumber(m.Seq) {
				t.Errorf("message %s has event id %q, want its seq %d", m.ID, e.id, m.Seq)
			}
			msgs = append(msgs, m.ID)
		case "status":
			var v apiv1.WorkflowView
			if err := json.Unmarshal([]byte(e.data), &v); err != nil {
				t.Fatal(err)
			}
			if e.id != "" {
				t.Errorf("status event carries id %q", e.id)
			}
			statuses = append(statuses, string(v.Status))
		}
	}
	if strings.Join(msgs, ",") != "m1,m2,m3" {
		t.Errorf("messages = %v, want m1,m2,m3", msgs)
	}
	if len(statuses) == 0 || statuses[0] != "running" || statuses[len(statuses)-1] != "completed" {
		t.Errorf("statuses = %v, want running … completed", statuses)
	}
	if last := events[len(events)-1]; last.event != "status" {
		t.Errorf("stream ends with %q, want the final status", last.event)
	}
}

func TestEventsReplayFromLastEventID(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, nil)
	w := testWorkflow("alice", workflow.StatusCompleted)
	env.store.put(w, workflow.Message{ID: "m1"}, workflow.Message{ID: "m2"}, workflow.Message{ID: "m3"})
	req := func(lastID string) *sseResult {
		rec := env.doWith(t, "GET", "/api/v1/workflows/"+w.ID+"/events", aliceToken, map[string]string{"Last-Event-ID": lastID})
		return &sseResult{code: rec.Code, events: parseSSE(t, rec.Body.String())}
	}
	got := req("2")
	if got.code != 200 {
		t.Fatalf("status %d", got.code)
	}
	var ids []string
	for _, e := range got.events {
		if e.event == "message" {
			ids = append(ids, e.id)
		}
	}
	if strings.Join(ids, ",") != "3" {
		t.Errorf("after Last-Event-ID 2 got message ids %v, want [3]", ids)
	}
	for _, bad := range []string{"x", "-1", "1.5"} {
		if r := req(bad); r.code != 422 {
			t.Errorf("Last-Event-ID %q: status %d, want 422", bad, r.code)
		}
	}
}

type sseResult struct {
	code   int
	events []sseEvent
}

func jsonNumber(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestCloseStreamsEndsRunningStream(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, nil)
	w := testWorkflow("alice", workflow.StatusRunning)
	env.store.put(w, workflow.Message{ID: "m1"})
	env.store.onGet = func(s *fakeStore, _ string) {
		if s.gets == 3 {
			env.srv.CloseStreams()
		}
	}
	rec := env.do(t, "GET", "/api/v1/workflows/"+w.ID+"/events", aliceToken, nil)
	events := parseSSE(t, rec.Body.String())
	if rec.Code != 200 || len(events) != 2 || events[0].event != "message" || events[1].event != "status" {
		t.Errorf("status %d events %+v, want one message and one status then the end", rec.Code, events)
	}
}

// TestEventsEndWithDeletedEvent: a workflow deleted while its stream is
// open ends the stream with a `deleted` event naming it, not a silent
// close a client would take for a dropped connection.
func TestEventsEndWithDeletedEvent(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, nil)
	w := testWorkflow("alice", workflow.StatusRunning)
	env.store.put(w, workflow.Message{ID: "m1"})
	env.store.onGet = func(s *fakeStore, id string) {
		if s.gets == 3 {
			delete(s.wfs, id)
		}
	}
	rec := env.do(t, "GET", "/api/v1/workflows/"+w.ID+"/events", aliceToken, nil)
	events := parseSSE(t, rec.Body.String())
	if rec.Code != 200 || len(events) != 3 {
		t.Fatalf("status %d events %+v, want message, status, deleted", rec.Code, events)
	}
	if last := events[2]; last.event != "deleted" || last.data != `{"id":"`+w.ID+`"}` || last.id != "" {
		t.Errorf("last event = %+v, want deleted with the workflow id and no event id", last)
	}
}

// TestAdminEventsStreamAnyUsersWorkflow: the admin stream follows another
// user's workflow like its owner's stream; a user token is refused.
func TestAdminEventsStreamAnyUsersWorkflow(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, func(o *Options) { o.Admin = func(huma.API) {} })
	w := testWorkflow("bob", workflow.StatusCompleted)
	env.store.put(w, workflow.Message{ID: "m1", Role: workflow.RoleUser, Text: "hi"})
	rec := env.do(t, "GET", "/admin/v1/workflows/"+w.ID+"/events", adminToken, nil)
	events := parseSSE(t, rec.Body.String())
	if rec.Code != 200 || len(events) != 2 || events[0].event != "message" || events[1].event != "status" {
		t.Errorf("admin stream: %d %+v, want bob's message and status", rec.Code, events)
	}
	if rec := env.do(t, "GET", "/admin/v1/workflows/"+w.ID+"/events", aliceToken, nil); rec.Code != 403 {
		t.Errorf("a user token on the admin stream: %d, want 403", rec.Code)
	}
	if rec := env.do(t, "GET", "/api/v1/workflows/"+w.ID+"/events", aliceToken, nil); rec.Code != 404 {
		t.Errorf("alice on bob's stream: %d, want 404", rec.Code)
	}
}

func TestEventsHeartbeat(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, func(o *Options) { o.Heartbeat = time.Nanosecond })
	w := testWorkflow("alice", workflow.StatusRunning)
	env.store.put(w)
	env.store.onGet = func(s *fakeStore, id string) {
		if s.gets == 4 {
			done := s.wfs[id].Clone()
			done.Status = workflow.StatusFailed
			s.putLocked(done)
		}
	}
	rec := env.do(t, "GET", "/api/v1/workflows/"+w.ID+"/events", aliceToken, nil)
	if n := strings.Count(rec.Body.String(), ": heartbeat\n\n"); n < 1 {
		t.Errorf("no heartbeat in %q", rec.Body)
	}
}

// TestEventsApprovalEndsThePausedStream: a round that pauses for approval
// sends its status and then an approval event carrying the pending
// approval, and the stream ends.
func TestEventsApprovalEndsThePausedStream(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, nil)
	w := testWorkflow("alice", workflow.StatusRunning)
	env.store.put(w, workflow.Message{ID: "m1"})
	env.store.onGet = func(s *fakeStore, id string) {
		if s.gets == 3 {
			paused := s.wfs[id].Clone()
			paused.Status = workflow.StatusAwaitingApproval
			paused.PendingApproval = &workflow.PendingApproval{ID: "apr_1", Round: 1, Step: 1, Action: "crm.update",
				Parameters: map[string]any{"id": 7}, Documents: []string{}, Effect: workflow.EffectWrite}
			s.wfs[id] = paused
		}
	}
	rec := env.do(t, "GET", "/api/v1/workflows/"+w.ID+"/events", aliceToken, nil)
	events := parseSSE(t, rec.Body.String())
	if len(events) < 3 {
		t.Fatalf("events %+v", events)
	}
	last := events[len(events)-1]
	var p workflow.PendingApproval
	if last.event != "approval" || json.Unmarshal([]byte(last.data), &p) != nil || p.ID != "apr_1" || p.Action != "crm.update" {
		t.Errorf("last event = %+v, want the approval", last)
	}
	if prev := events[len(events)-2]; prev.event != "status" || !strings.Contains(prev.data, `"awaiting_approval"`) {
		t.Errorf("event before the approval = %+v, want the paused status", prev)
	}
}

// TestEventsWokenByALocalCommit: with a poll far longer than the test, a
// stream still sends what a commit on this instance changed, because the
// published change wakes it; a change of another workflow does not.
func TestEventsWokenByALocalCommit(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, func(o *Options) { o.EventPoll = time.Hour })
	w := testWorkflow("alice", workflow.StatusRunning)
	env.store.put(w, workflow.Message{ID: "m1", Role: workflow.RoleUser, Text: "hi"})
	done := make(chan []sseEvent, 1)
	go func() {
		rec := env.do(t, "GET", "/api/v1/workflows/"+w.ID+"/events", aliceToken, nil)
		done <- parseSSE(t, rec.Body.String())
	}()
	for env.changes.watching(w.ID) == 0 { // the stream watches
		time.Sleep(time.Millisecond)
	}
	env.changes.Publish(workflow.Change{WorkflowID: "wf_other"})
	ended := w.Clone()
	ended.Status, ended.StopReason, ended.Step = workflow.StatusCompleted, workflow.StopCompleted, 1
	env.store.put(ended, workflow.Message{ID: "m2", Role: workflow.RoleAssistant, Text: "done"})
	env.changes.Publish(workflow.Change{WorkflowID: w.ID})
	select {
	case events := <-done:
		// The first read may come before or after the commit.
		var msgs []string
		for _, e := range events {
			if e.event == "message" {
				var m apiv1.MessageView
				if err := json.Unmarshal([]byte(e.data), &m); err != nil {
					t.Fatal(err)
				}
				msgs = append(msgs, m.ID)
			}
		}
		last := events[len(events)-1]
		if strings.Join(msgs, ",") != "m1,m2" || last.event != "status" || !strings.Contains(last.data, `"status":"completed"`) {
			t.Errorf("events %+v, want m1 and the committed m2, then the final status", events)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the stream did not end: the commit did not wake it")
	}
	if n := env.changes.watching(w.ID); n != 0 {
		t.Errorf("%d streams still watching after the stream ended", n)
	}
}
