package a2a_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/twostep/twostep/a2a"
	"github.com/twostep/twostep/engine/enginetest"
)

// TestErrorsCarryTheSpecCodes: each refusal is a JSON-RPC error with the
// code of the specification, and another user's task reads exactly as an
// unknown one.
func TestErrorsCarryTheSpecCodes(t *testing.T) {
	t.Parallel()
	h := newHarness(t, script(enginetest.Completes("done")...), nil)
	done := h.task("alice", "SendMessage", message("m1", "hi", nil))
	onTask := func(id string) map[string]any { return map[string]any{"id": id} }
	cases := []struct {
		name, user, method string
		params             any
		want               int
	}{
		{"unknown method", "alice", "message/send", message("x", "hi", nil), -32601},
		{"unknown task", "alice", "GetTask", onTask("wf_01JZZZZZZZZZZZZZZZZZZZZZZZ.1"), -32001},
		{"malformed task id", "alice", "GetTask", onTask("not-a-task"), -32001},
		{"a round not begun", "alice", "GetTask", onTask(done.ContextID + ".2"), -32001},
		{"another user's task", "bob", "GetTask", onTask(done.ID), -32001},
		{"another user's context", "bob", "ListTasks", map[string]any{"contextId": done.ContextID}, 0},
		{"cancel a completed task", "alice", "CancelTask", onTask(done.ID), -32002},
		{"a message to a completed task", "alice", "SendMessage", message("m2", "more", map[string]any{"taskId": done.ID}), -32004},
		{"no params", "alice", "GetTask", nil, -32602},
		{"no messageId", "alice", "SendMessage", message("", "hi", nil), -32602},
		{"an agent's message", "alice", "SendMessage", message("m3", "hi", map[string]any{"role": "ROLE_AGENT"}), -32602},
		{"a data part starting a task", "alice", "SendMessage", message("m4", "", map[string]any{
			"parts": []any{map[string]any{"data": map[string]any{"decision": "approve"}}}}), -32602},
		{"a file by url", "alice", "SendMessage", message("m5", "", map[string]any{
			"parts": []any{map[string]any{"url": "https://example.com/a.pdf"}}}), -32602},
		{"a prompt over the limit", "alice", "SendMessage", message("m6", strings.Repeat("x", 501), nil), -32602},
		{"a private push URL", "alice", "SendMessage", withPush(message("m7", "hi", nil), "http://10.0.0.1/hook", "0123456789abcdef"), -32602},
		{"a short push token", "alice", "SendMessage", withPush(message("m8", "hi", nil), "https://hooks.example/in", "short"), -32602},
		{"a push config added later", "alice", "CreateTaskPushNotificationConfig",
			map[string]any{"taskId": done.ID, "url": "https://hooks.example/in", "token": "0123456789abcdef"}, -32004},
		{"the extended card", "alice", "GetExtendedAgentCard", map[string]any{}, -32007},
		{"a bad list status", "alice", "ListTasks", map[string]any{"status": "done"}, -32602},
	}
	for _, c := range cases {
		if got := h.errorCode(c.user, c.method, c.params); got != c.want {
			t.Errorf("%s: code %d, want %d", c.name, got, c.want)
		}
	}
	var l struct{ Tasks []a2a.Task }
	if a := h.call("bob", "ListTasks", map[string]any{"contextId": done.ContextID}); json.Unmarshal(a.Result, &l) != nil || len(l.Tasks) != 0 {
		t.Errorf("bob lists alice's context: %s", a.Result)
	}
}

func withPush(req map[string]any, url, token string) map[string]any {
	req["configuration"] = map[string]any{"taskPushNotificationConfig": map[string]any{"url": url, "token": token}}
	return req
}

// TestEnvelopeErrors: what is not a JSON-RPC request, and a body over
// limits.maxBodyBytes (413 with a JSON-RPC error, read no further).
func TestEnvelopeErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t, script(), nil)
	for _, c := range []struct {
		body       string
		status     int
		code       int
		nameOfCase string
	}{
		{`{"jsonrpc":"2.0","id":1,`, 200, -32700, "truncated JSON"},
		{`{"jsonrpc":"1.0","id":1,"method":"GetTask"}`, 200, -32600, "not 2.0"},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"GetTask"}`, 200, -32600, "an object id"},
		{`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":` + `"` + strings.Repeat("x", 70<<10) + `"}}`, 413, -32600, "too large"},
	} {
		status, b := h.post("alice", []byte(c.body))
		var a rpcAnswer
		if err := json.Unmarshal(b, &a); err != nil || status != c.status || a.Error == nil || a.Error.Code != c.code {
			t.Errorf("%s: %d %s, want %d code %d", c.nameOfCase, status, b, c.status, c.code)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, h.srv.URL+a2a.RPCPath, bytes.NewReader(nil))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET /a2a answered %d", resp.StatusCode)
	}
}

// TestVersionHeader: a client naming another protocol version is told
// so (-32009); 1.0 (with or without a patch) and no header are served.
func TestVersionHeader(t *testing.T) {
	t.Parallel()
	h := newHarness(t, script(), nil)
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}`)
	for v, want := range map[string]int{"0.3": -32009, "2.0": -32009, "1.0": 0, "1.0.1": 0, "": 0} {
		req, _ := http.NewRequest(http.MethodPost, h.srv.URL+a2a.RPCPath, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer alice")
		if v != "" {
			req.Header.Set("A2A-Version", v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var a rpcAnswer
		_ = json.NewDecoder(resp.Body).Decode(&a)
		resp.Body.Close()
		got := 0
		if a.Error != nil {
			got = a.Error.Code
		}
		if got != want {
			t.Errorf("A2A-Version %q: code %d, want %d", v, got, want)
		}
	}
}
