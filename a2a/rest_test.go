package a2a_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/twostep/twostep/a2a"
	"github.com/twostep/twostep/engine/enginetest"
)

// rest sends an HTTP+JSON request as user and returns the status and
// body.
func (h *harness) rest(user, method, path string, body any) (int, []byte) {
	h.t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, h.srv.URL+a2a.RESTPath+path, r)
	req.Header.Set("Authorization", "Bearer "+user)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// TestRESTBinding: the HTTP+JSON routes are the JSON-RPC methods — send,
// get, list, cancel — and errors are google.rpc.Status objects whose
// ErrorInfo names the A2A reason, with the specification's HTTP status.
func TestRESTBinding(t *testing.T) {
	t.Parallel()
	h := newHarness(t, script(enginetest.Completes("over rest")...), nil)
	status, b := h.rest("alice", "POST", "/message:send", message("r1", "hi", nil))
	var sent struct{ Task a2a.Task }
	if err := json.Unmarshal(b, &sent); err != nil || status != 200 || sent.Task.Status.State != a2a.StateCompleted {
		t.Fatalf("message:send %d %s", status, b)
	}
	id := sent.Task.ID
	var got a2a.Task
	if status, b := h.rest("alice", "GET", "/tasks/"+id+"?historyLength=0", nil); status != 200 ||
		json.Unmarshal(b, &got) != nil || got.ID != id || got.History != nil || got.Artifacts[0].Parts[0].Text != "over rest" {
		t.Errorf("GET task %d %s", status, b)
	}
	if status, b := h.rest("alice", "GET", "/tasks?contextId="+sent.Task.ContextID+"&pageSize=10", nil); status != 200 ||
		!strings.Contains(string(b), id) {
		t.Errorf("GET tasks %d %s", status, b)
	}
	for _, c := range []struct {
		user, method, path string
		status             int
		reason             string
	}{
		{"bob", "GET", "/tasks/" + id, 404, "TASK_NOT_FOUND"},
		{"alice", "POST", "/tasks/" + id + ":cancel", 400, "TASK_NOT_CANCELABLE"},
		{"alice", "POST", "/tasks/" + id + ":subscribe", 400, "UNSUPPORTED_OPERATION"},
		{"alice", "GET", "/tasks?pageSize=many", 400, "INVALID_PARAMS"},
		{"alice", "GET", "/tasks?color=red", 400, "INVALID_PARAMS"},
		{"alice", "GET", "/extendedAgentCard", 400, "EXTENDED_AGENT_CARD_NOT_CONFIGURED"},
		{"alice", "DELETE", "/tasks/" + id + "/pushNotificationConfigs/default", 400, "UNSUPPORTED_OPERATION"},
		{"alice", "GET", "/nothing", 404, ""},
	} {
		status, b := h.rest(c.user, c.method, c.path, nil)
		var e struct {
			Error struct {
				Code    int
				Message string
				Details []struct {
					Type   string `json:"@type"`
					Reason string
				}
			}
		}
		_ = json.Unmarshal(b, &e)
		reason := ""
		if len(e.Error.Details) == 1 && e.Error.Details[0].Type == "type.googleapis.com/google.rpc.ErrorInfo" {
			reason = e.Error.Details[0].Reason
		}
		if status != c.status || e.Error.Code != c.status || reason != c.reason || e.Error.Message == "" {
			t.Errorf("%s %s as %s: %d %s, want %d %s", c.method, c.path, c.user, status, b, c.status, c.reason)
		}
	}
}

// TestRESTStream: message:stream writes bare StreamResponses.
func TestRESTStream(t *testing.T) {
	t.Parallel()
	h := newHarness(t, script(enginetest.Completes("streamed")...), nil)
	body, _ := json.Marshal(message("rs", "hi", nil))
	req, _ := http.NewRequest("POST", h.srv.URL+a2a.RESTPath+"/message:stream", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer alice")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var events []a2a.StreamResponse
	for _, line := range strings.Split(string(b), "\n") {
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			var ev a2a.StreamResponse
			if err := json.Unmarshal([]byte(data), &ev); err != nil {
				t.Fatalf("event %s: %v", data, err)
			}
			events = append(events, ev)
		}
	}
	if len(events) < 2 || events[0].Task == nil || events[len(events)-1].StatusUpdate == nil ||
		events[len(events)-1].StatusUpdate.Status.State != a2a.StateCompleted {
		t.Fatalf("stream %s", b)
	}
}

// TestRESTPushConfigBodyNotAnObject: a push config body that is JSON but
// not an object (null, an array, a string) is a 400 INVALID_ARGUMENT, not
// a panic.
func TestRESTPushConfigBodyNotAnObject(t *testing.T) {
	t.Parallel()
	h := newHarness(t, script(), nil)
	for _, body := range []string{`null`, `[]`, `"x"`, `{`} {
		status, b := h.rest("alice", "POST", "/tasks/wf_x.1/pushNotificationConfigs", json.RawMessage(body))
		if status != http.StatusBadRequest || !strings.Contains(string(b), "INVALID_ARGUMENT") {
			t.Errorf("body %s: %d %s, want 400 INVALID_ARGUMENT", body, status, b)
		}
	}
}
