package httpapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/twostep/twostep/apiv1"
	"github.com/twostep/twostep/changefeed"
	"github.com/twostep/twostep/client"
	"github.com/twostep/twostep/workflow"
)

// openStream opens the event stream of id on ts and returns its events,
// read as they arrive, and the function that closes it.
func openStream(t *testing.T, ts *httptest.Server, path string) (<-chan client.Event, func()) {
	t.Helper()
	req, err := http.NewRequest("GET", ts.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+aliceToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	out := make(chan client.Event, 64)
	go func() {
		defer close(out)
		for ev, err := range client.ReadEvents(resp.Body) {
			if err != nil {
				return
			}
			out <- ev
		}
	}()
	return out, func() { _ = resp.Body.Close() }
}

// next returns the next event that is not of a type in skip.
func next(t *testing.T, events <-chan client.Event, skip ...string) client.Event {
	t.Helper()
	for ev := range events {
		if !contains(skip, ev.Type) {
			return ev
		}
	}
	t.Fatal("the stream ended")
	return client.Event{}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestEventsStreamDeltas: while a round runs, the deltas of its workflow
// arrive as delta events (no id) in order, another workflow's do not, the
// committed message follows as a message event, and ?deltas=none
// subscribes to none.
func TestEventsStreamDeltas(t *testing.T) {
	t.Parallel()
	deltas := changefeed.NewDeltas()
	env := newTestEnv(t, func(o *Options) { o.Deltas = deltas })
	w := testWorkflow("alice", workflow.StatusRunning)
	env.store.put(w, workflow.Message{ID: "m1", Role: workflow.RoleUser, Text: "hi"})
	ts := httptest.NewServer(env.srv.Routes())
	defer ts.Close()

	events, closeStream := openStream(t, ts, "/api/v1/workflows/"+w.ID+"/events")
	defer closeStream()
	if ev := next(t, events, "message"); ev.Type != "status" {
		t.Fatalf("first event %q, want status", ev.Type)
	}
	// The stream subscribed before its first read: these reach it.
	if !deltas.Watched(w.ID) {
		t.Fatal("the stream does not subscribe to deltas")
	}
	deltas.PublishDelta(workflow.Delta{WorkflowID: "wf_other", Field: "message", Text: "not yours"})
	pieces := []string{"Hel", "lo ", "there"}
	for _, p := range pieces {
		deltas.PublishDelta(workflow.Delta{WorkflowID: w.ID, UserID: "alice", Round: 1, Step: 2, Stage: workflow.StageTwo, Field: "message", Text: p})
	}
	got := ""
	for range pieces {
		ev := next(t, events)
		if ev.Type != "delta" || ev.ID != "" {
			t.Fatalf("event %q with id %q, want a delta without id", ev.Type, ev.ID)
		}
		var d apiv1.Delta
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			t.Fatal(err)
		}
		if d.Round != 1 || d.Step != 2 || d.Stage != "stage2" || d.Field != "message" {
			t.Errorf("delta %+v, want round 1 step 2 stage2 message", d)
		}
		got += d.Text
	}
	if got != "Hello there" {
		t.Errorf("deltas read %q, want Hello there", got)
	}
	done := w.Clone()
	done.Status, done.StopReason = workflow.StatusCompleted, workflow.StopCompleted
	env.store.put(done, workflow.Message{ID: "m2", Role: workflow.RoleAssistant, Text: "Hello there"})
	env.changes.Publish(workflow.Change{WorkflowID: w.ID})
	if ev := next(t, events); ev.Type != "message" || ev.ID != "2" {
		t.Errorf("after the deltas: %q id %q, want the committed message 2", ev.Type, ev.ID)
	}

	other := testWorkflow("alice", workflow.StatusRunning)
	env.store.put(other)
	quiet, closeQuiet := openStream(t, ts, "/api/v1/workflows/"+other.ID+"/events?deltas=none")
	defer closeQuiet()
	if ev := next(t, quiet); ev.Type != "status" {
		t.Fatalf("first event %q, want status", ev.Type)
	}
	if deltas.Watched(other.ID) {
		t.Error("a stream opened with ?deltas=none subscribes to deltas")
	}
}

// TestEventsStreamOnlyTheDocumentedFields: the raw Stage 2 reply the
// engine publishes for AG-UI's tool call arguments (field parameters) is
// not a delta event of /api: the wire contract names actionObjective and
// message only.
func TestEventsStreamOnlyTheDocumentedFields(t *testing.T) {
	t.Parallel()
	deltas := changefeed.NewDeltas()
	env := newTestEnv(t, func(o *Options) { o.Deltas = deltas })
	w := testWorkflow("alice", workflow.StatusRunning)
	env.store.put(w)
	ts := httptest.NewServer(env.srv.Routes())
	defer ts.Close()
	events, closeStream := openStream(t, ts, "/api/v1/workflows/"+w.ID+"/events")
	defer closeStream()
	if ev := next(t, events, "message"); ev.Type != "status" {
		t.Fatalf("first event %q, want status", ev.Type)
	}
	base := workflow.Delta{WorkflowID: w.ID, UserID: "alice", Round: 1, Step: 2, Stage: workflow.StageTwo}
	raw, answer := base, base
	raw.Field, raw.Text = "parameters", `{"message":"Hi`
	answer.Field, answer.Text = "message", "Hi"
	deltas.PublishDelta(raw)
	deltas.PublishDelta(answer)
	var d apiv1.Delta
	if err := json.Unmarshal(next(t, events).Data, &d); err != nil {
		t.Fatal(err)
	}
	if d.Field != "message" || d.Text != "Hi" {
		t.Errorf("first delta %+v, want the message piece (no parameters delta)", d)
	}
}
