package a2a_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twostep/twostep/a2a"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/webhooks"
	"github.com/twostep/twostep/workflow"
)

// stream posts a streaming method and returns its events' results;
// first, when set, runs once the first event arrived.
func (h *harness) stream(user, method string, params any, first func()) []a2a.StreamResponse {
	h.t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "s1", "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, h.srv.URL+a2a.RPCPath, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+user)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		h.t.Fatalf("%s answered %s", method, ct)
	}
	var out []a2a.StreamResponse
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev struct {
			JSONRPC string
			ID      string
			Result  a2a.StreamResponse
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil || ev.JSONRPC != "2.0" || ev.ID != "s1" {
			h.t.Fatalf("event %s (%v)", data, err)
		}
		out = append(out, ev.Result)
		if len(out) == 1 && first != nil {
			first()
		}
	}
	return out
}

// TestStreamedSend: the stream begins with the task, reports the round's
// steps as working status updates, then the answer artifact and the
// completed status, and ends.
func TestStreamedSend(t *testing.T) {
	t.Parallel()
	h := newHarness(t, script(append(enginetest.Echoes("a"), enginetest.Completes("streamed answer")...)...), nil)
	evs := h.stream("alice", "SendStreamingMessage", message("s", "echo a", nil), nil)
	if len(evs) < 3 || evs[0].Task == nil {
		t.Fatalf("events %+v", evs)
	}
	id := evs[0].Task.ID
	last := evs[len(evs)-1]
	if last.StatusUpdate == nil || last.StatusUpdate.TaskID != id || last.StatusUpdate.Status.State != a2a.StateCompleted {
		t.Fatalf("last event %+v", last)
	}
	if evs[1].StatusUpdate == nil || evs[1].StatusUpdate.Status.State != a2a.StateWorking {
		t.Errorf("second event %+v, want a working status update", evs[1])
	}
	var answer bool
	for _, ev := range evs[1 : len(evs)-1] {
		switch {
		case ev.ArtifactUpdate != nil && ev.ArtifactUpdate.Artifact.Name == "answer":
			answer = ev.ArtifactUpdate.Artifact.Parts[0].Text == "streamed answer"
		case ev.StatusUpdate != nil && ev.StatusUpdate.Status.State != a2a.StateWorking:
			t.Errorf("status before the end: %+v", ev.StatusUpdate.Status)
		}
	}
	if !answer {
		t.Errorf("no answer artifact in %+v", evs)
	}
}

// TestSubscribeFollowsARunningTask: SubscribeToTask on a working task
// starts with it and ends with its final status once it is canceled.
func TestSubscribeFollowsARunningTask(t *testing.T) {
	t.Parallel()
	h := newHarness(t, script(), nil)
	req := message("slow", "SLOW", nil)
	req["configuration"] = map[string]any{"returnImmediately": true}
	got := h.task("alice", "SendMessage", req)
	evs := h.stream("alice", "SubscribeToTask", map[string]any{"id": got.ID}, func() {
		h.task("alice", "CancelTask", map[string]any{"id": got.ID})
	})
	if evs[0].Task == nil || evs[0].Task.ID != got.ID {
		t.Fatalf("first event %+v", evs[0])
	}
	if last := evs[len(evs)-1]; last.StatusUpdate == nil && last.Task == nil {
		t.Fatalf("last event %+v", last)
	} else if last.StatusUpdate != nil && last.StatusUpdate.Status.State != a2a.StateCanceled ||
		last.Task != nil && last.Task.Status.State != a2a.StateCanceled {
		t.Errorf("last event %+v, want canceled", last)
	}
}

// TestPushGoesThroughTheOutbox: a push config sent with the first message
// becomes the workflow's webhook (format a2a, the token its secret):
// the round's end enqueues a delivery whose body is the task's status
// update, signed with the token; the config reads back without it.
func TestPushGoesThroughTheOutbox(t *testing.T) {
	t.Parallel()
	h := newHarness(t, script(enginetest.Completes("pushed")...), nil)
	const token = "push-token-0123456789"
	got := h.task("alice", "SendMessage", withPush(message("p", "hi", nil), "https://hooks.example/a2a", token))
	if got.Status.State != a2a.StateCompleted {
		t.Fatalf("task %+v", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ds, err := h.store.ClaimWebhooks(ctx, time.Now().Add(time.Minute), time.Minute, 10, 10)
	if err != nil || len(ds) != 1 {
		t.Fatalf("deliveries %+v (%v)", ds, err)
	}
	d := ds[0]
	var body a2a.StreamResponse
	if err := json.Unmarshal(d.Body, &body); err != nil || body.StatusUpdate == nil ||
		body.StatusUpdate.TaskID != got.ID || body.StatusUpdate.Status.State != a2a.StateCompleted {
		t.Fatalf("body %s (%v)", d.Body, err)
	}
	if d.URL != "https://hooks.example/a2a" || d.Secret != token ||
		webhooks.Sign(token, d.ID, 1, d.Body) != webhooks.Sign(d.Secret, d.ID, 1, d.Body) {
		t.Errorf("delivery %s to %s", d.ID, d.URL)
	}
	a := h.call("alice", "ListTaskPushNotificationConfigs", map[string]any{"taskId": got.ID})
	if a.Error != nil || !strings.Contains(string(a.Result), "https://hooks.example/a2a") || strings.Contains(string(a.Result), token) {
		t.Errorf("configs %s %+v", a.Result, a.Error)
	}
}

// TestPushBodyOfAPause carries the approval the receiver must answer.
func TestPushBodyOfAPause(t *testing.T) {
	t.Parallel()
	wf := &workflow.Workflow{ID: "wf_01JABCDEFGHJKMNPQRSTVWXYZ0", Round: 2, Status: workflow.StatusAwaitingApproval,
		PendingApproval: &workflow.PendingApproval{ID: "apr_1", Round: 2, Step: 1, Action: enginetest.Echo, Effect: workflow.EffectWrite}}
	b, err := a2a.PushBody(workflow.EventRoundAwaitingApproval, wf)
	if err != nil {
		t.Fatal(err)
	}
	var body a2a.StreamResponse
	if err := json.Unmarshal(b, &body); err != nil || body.StatusUpdate.TaskID != wf.ID+".2" ||
		body.StatusUpdate.Status.State != a2a.StateInputRequired || !strings.Contains(string(body.StatusUpdate.Status.Message.Parts[1].Data), `"approvalId":"apr_1"`) {
		t.Errorf("body %s (%v)", b, err)
	}
}

// TestCloseEndsStreams: at shutdown (Close) an open stream ends after
// its current frame, though its task goes on.
func TestCloseEndsStreams(t *testing.T) {
	t.Parallel()
	h := newHarness(t, script(), nil)
	req := message("slow", "SLOW", nil)
	req["configuration"] = map[string]any{"returnImmediately": true}
	got := h.task("alice", "SendMessage", req)
	evs := h.stream("alice", "SubscribeToTask", map[string]any{"id": got.ID}, h.a2a.Close)
	if len(evs) != 2 || evs[0].Task == nil || evs[1].StatusUpdate == nil || evs[1].StatusUpdate.Status.State != a2a.StateWorking {
		t.Fatalf("events %+v", evs)
	}
	if st := h.task("alice", "GetTask", map[string]any{"id": got.ID}).Status.State; st != a2a.StateWorking {
		t.Errorf("the task is %s after Close, want still working", st)
	}
}

// TestStreamEndsWhenTheTaskIsDeleted: a stream whose workflow is gone
// when it reads it again (deleted) ends with a canceled status instead of
// polling a task that no longer exists until the client gives up.
func TestStreamEndsWhenTheTaskIsDeleted(t *testing.T) {
	t.Parallel()
	h := newHarness(t, script(), nil)
	req := message("slow", "SLOW", nil)
	req["configuration"] = map[string]any{"returnImmediately": true}
	got := h.task("alice", "SendMessage", req)
	done := make(chan []a2a.StreamResponse, 1)
	go func() {
		done <- h.stream("alice", "SubscribeToTask", map[string]any{"id": got.ID}, func() {
			h.gone.Store(true)
			if _, err := h.eng.Stop(context.Background(), "alice", got.ContextID); err != nil {
				t.Error(err)
			}
		})
	}()
	var evs []a2a.StreamResponse
	select {
	case evs = <-done:
	case <-time.After(time.Minute): // a guard against a hang, not a timing assertion
		h.a2a.Close()
		t.Fatal("the stream of a deleted task did not end")
	}
	last := evs[len(evs)-1]
	if last.StatusUpdate == nil || last.StatusUpdate.TaskID != got.ID || last.StatusUpdate.Status.State != a2a.StateCanceled {
		t.Errorf("last event %+v, want a canceled status update", last)
	}
}

// TestListTasks: each workflow's latest round, every round of one
// context newest first, and the filters.
func TestListTasks(t *testing.T) {
	t.Parallel()
	h := newHarness(t, script(append(enginetest.Completes("one"), enginetest.Completes("two")...)...), nil)
	first := h.task("alice", "SendMessage", message("a", "first", nil))
	second := h.task("alice", "SendMessage", message("b", "again", map[string]any{"contextId": first.ContextID}))
	if second.ID != first.ContextID+".2" || second.Status.State != a2a.StateCompleted {
		t.Fatalf("second round %+v", second)
	}
	list := func(params map[string]any) []a2a.Task {
		var l struct{ Tasks []a2a.Task }
		a := h.call("alice", "ListTasks", params)
		if a.Error != nil || json.Unmarshal(a.Result, &l) != nil {
			t.Fatalf("ListTasks(%v): %s %+v", params, a.Result, a.Error)
		}
		return l.Tasks
	}
	if ts := list(map[string]any{}); len(ts) != 1 || ts[0].ID != second.ID || ts[0].Artifacts != nil || ts[0].History != nil {
		t.Errorf("ListTasks = %+v, want the latest round without artifacts or history", ts)
	}
	ts := list(map[string]any{"contextId": first.ContextID, "includeArtifacts": true})
	if len(ts) != 2 || ts[0].ID != second.ID || ts[1].ID != first.ID || ts[1].Artifacts[0].Parts[0].Text != "one" {
		t.Errorf("the context's tasks = %+v", ts)
	}
	if ts := list(map[string]any{"status": a2a.StateWorking}); len(ts) != 0 {
		t.Errorf("working tasks = %+v", ts)
	}
	if ts := list(map[string]any{"statusTimestampAfter": "2100-01-01T00:00:00Z"}); len(ts) != 0 {
		t.Errorf("tasks after 2100 = %+v", ts)
	}
}

// TestBlockingSendEndsWhenTheTaskIsDeleted: a blocking SendMessage whose
// workflow is gone when it reads it again (deleted) answers task not
// found at once instead of waiting out MaxWait.
func TestBlockingSendEndsWhenTheTaskIsDeleted(t *testing.T) {
	t.Parallel()
	h := newHarness(t, script(), nil)
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": "SendMessage", "params": message("slow", "SLOW", nil)})
	done := make(chan string, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, h.srv.URL+a2a.RPCPath, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer alice")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- err.Error()
			return
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		done <- b.String()
	}()
	var id string
	for id == "" {
		wfs, _, err := h.eng.List(context.Background(), "alice", workflow.Page{Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(wfs) == 1 {
			id = wfs[0].ID
			break
		}
		<-time.After(time.Millisecond)
	}
	h.gone.Store(true)
	if _, err := h.eng.Stop(context.Background(), "alice", id); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-done:
		if !strings.Contains(got, `"code":-32001`) {
			t.Errorf("answer %s, want task not found (-32001)", got)
		}
	case <-time.After(time.Minute): // a guard against a hang, not a timing assertion
		h.a2a.Close()
		t.Fatal("the blocking send of a deleted task did not answer")
	}
}
