package a2a_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/twostep/twostep/a2a"
	"github.com/twostep/twostep/engine/enginetest"
)

// TestCardIsPublicAndListsTheCatalogue: the card needs no token, shows the
// JSON-RPC interface on the host asked, bearer security in proto-JSON
// form (what @a2a-js/sdk's resolver parses) and one skill per action.
func TestCardIsPublicAndListsTheCatalogue(t *testing.T) {
	t.Parallel()
	h := newHarness(t, script(), nil)
	resp, err := http.Get(h.srv.URL + a2a.CardPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var card struct {
		SupportedInterfaces []struct{ URL, ProtocolBinding, ProtocolVersion string }
		Capabilities        struct{ Streaming, PushNotifications bool }
		SecuritySchemes     map[string]map[string]map[string]string
		Skills              []struct {
			ID, Description string
			Tags            []string
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&card); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("card: %d %v", resp.StatusCode, err)
	}
	if ifs := card.SupportedInterfaces; len(ifs) != 2 || ifs[0].URL != h.srv.URL+"/a2a" || ifs[0].ProtocolBinding != "JSONRPC" ||
		ifs[1].URL != h.srv.URL+"/a2a/rest" || ifs[1].ProtocolBinding != "HTTP+JSON" || ifs[0].ProtocolVersion != "1.0" {
		t.Errorf("interfaces %+v", ifs)
	}
	if !card.Capabilities.Streaming || !card.Capabilities.PushNotifications {
		t.Errorf("capabilities %+v", card.Capabilities)
	}
	if card.SecuritySchemes["bearer"]["httpAuthSecurityScheme"]["scheme"] != "Bearer" {
		t.Errorf("security schemes %+v", card.SecuritySchemes)
	}
	want := enginetest.NewRegistry().Actions()
	if len(card.Skills) != len(want) {
		t.Fatalf("%d skills, want %d", len(card.Skills), len(want))
	}
	for i, s := range card.Skills {
		if s.ID != want[i].Name || s.Description != want[i].Description || s.Tags[0] != strings.Split(want[i].Name, ".")[0] {
			t.Errorf("skill %d = %+v, want %s", i, s, want[i].Name)
		}
	}
}

// TestSendMessageCompletesWithArtifacts: a message without a context
// starts a workflow and waits for its round: completed, the answer as a
// text artifact, the echoed document as a file part pointing at the
// download route, the history the prompt and the answer; GetTask reads
// the same task.
func TestSendMessageCompletesWithArtifacts(t *testing.T) {
	t.Parallel()
	h := newHarness(t, script(append(enginetest.Echoes("hello"), enginetest.Completes("the answer")...)...), nil)
	got := h.task("alice", "SendMessage", message("m1", "echo hello", nil))
	if got.Status.State != a2a.StateCompleted || !strings.HasPrefix(got.ContextID, "wf_") || got.ID != got.ContextID+".1" {
		t.Fatalf("task %+v", got)
	}
	if len(got.Artifacts) != 2 || got.Artifacts[0].Name != "answer" || got.Artifacts[0].Parts[0].Text != "the answer" {
		t.Fatalf("artifacts %+v", got.Artifacts)
	}
	doc := got.Artifacts[1].Parts[0]
	if doc.Filename != "echo.txt" || !strings.HasPrefix(doc.URL, h.srv.URL+"/api/v1/workflows/"+got.ContextID+"/documents/doc_") {
		t.Errorf("document part %+v", doc)
	}
	if len(got.History) != 2 || got.History[0].Role != a2a.RoleUser || got.History[0].Parts[0].Text != "echo hello" ||
		got.History[1].Role != a2a.RoleAgent {
		t.Errorf("history %+v", got.History)
	}
	again := h.task("alice", "GetTask", map[string]any{"id": got.ID, "historyLength": 0})
	if again.Status.State != a2a.StateCompleted || len(again.History) != 0 || len(again.Artifacts) != 2 {
		t.Errorf("GetTask %+v", again)
	}
}

// TestRepeatedMessageIDIsOneTask: the same message sent twice is one task
// (the Idempotency-Key store); the same id with another message is
// refused as invalid params.
func TestRepeatedMessageIDIsOneTask(t *testing.T) {
	t.Parallel()
	h := newHarness(t, script(enginetest.Completes("once")...), nil)
	first := h.task("alice", "SendMessage", message("same", "hi", nil))
	second := h.task("alice", "SendMessage", message("same", "hi", nil))
	if second.ID != first.ID || second.Status.State != a2a.StateCompleted {
		t.Fatalf("repeat answered %+v, want task %s completed", second, first.ID)
	}
	list := h.call("alice", "ListTasks", map[string]any{})
	var l struct{ Tasks []a2a.Task }
	_ = json.Unmarshal(list.Result, &l)
	if len(l.Tasks) != 1 {
		t.Errorf("ListTasks has %d tasks, want 1", len(l.Tasks))
	}
	if code := h.errorCode("alice", "SendMessage", message("same", "something else", nil)); code != -32602 {
		t.Errorf("reused messageId answered %d, want -32602", code)
	}
	// Another user's messageIds are theirs.
	if code := h.errorCode("bob", "SendMessage", message("same", "something else", map[string]any{"contextId": first.ContextID})); code != -32001 {
		t.Errorf("bob on alice's context answered %d, want -32001", code)
	}
}

// TestApprovalIsInputRequired: a step that waits for approval is
// input-required with the approval in a data part; a decision the
// approvals route refuses is invalid params and leaves it pending; an
// approve through the task completes the round.
func TestApprovalIsInputRequired(t *testing.T) {
	t.Parallel()
	h := newHarness(t, script(append(enginetest.Echoes("x"), enginetest.Completes("approved and done")...)...), echoNeedsApproval{})
	got := h.task("alice", "SendMessage", message("m1", "echo x", nil))
	if got.Status.State != a2a.StateInputRequired || got.Status.Message == nil || len(got.Status.Message.Parts) != 2 {
		t.Fatalf("task %+v", got)
	}
	var req struct {
		ApprovalID, Action string
		Parameters         map[string]any
	}
	if err := json.Unmarshal(got.Status.Message.Parts[1].Data, &req); err != nil || req.Action != enginetest.Echo ||
		!strings.HasPrefix(req.ApprovalID, "apr_") || req.Parameters["text"] != "x" {
		t.Fatalf("approval data %s (%v)", got.Status.Message.Parts[1].Data, err)
	}
	answer := func(id string, data any) map[string]any {
		return message(id, "", map[string]any{"taskId": got.ID, "contextId": got.ContextID,
			"parts": []any{map[string]any{"data": data}}})
	}
	for _, bad := range []any{
		map[string]any{"decision": "reject", "parameters": map[string]any{"text": "y"}},
		map[string]any{"decision": "maybe"},
		map[string]any{"decision": "approve", "extra": 1},
		map[string]any{"decision": "approve", "parameters": map[string]any{"text": 5}},
	} {
		if code := h.errorCode("alice", "SendMessage", answer("bad", bad)); code != -32602 {
			t.Errorf("decision %v answered %d, want -32602", bad, code)
		}
	}
	if code := h.errorCode("bob", "SendMessage", answer("bob", map[string]any{"decision": "approve"})); code != -32001 {
		t.Errorf("bob's decision answered %d, want -32001", code)
	}
	if st := h.task("alice", "GetTask", map[string]any{"id": got.ID}).Status.State; st != a2a.StateInputRequired {
		t.Fatalf("after refused decisions the task is %s", st)
	}
	done := h.task("alice", "SendMessage", answer("ok", map[string]any{"decision": "approve"}))
	if done.ID != got.ID || done.Status.State != a2a.StateCompleted || done.Artifacts[0].Parts[0].Text != "approved and done" {
		t.Fatalf("after approve: %+v", done)
	}
}

// TestCancelStopsASlowRound: a task sent with returnImmediately is
// working; CancelTask stops it (canceled); a second cancel is not
// cancelable, and another user's cancel is task not found.
func TestCancelStopsASlowRound(t *testing.T) {
	t.Parallel()
	h := newHarness(t, script(), nil)
	req := message("slow", "SLOW please", nil)
	req["configuration"] = map[string]any{"returnImmediately": true}
	got := h.task("alice", "SendMessage", req)
	if got.Status.State != a2a.StateWorking {
		t.Fatalf("task %+v, want working", got)
	}
	if code := h.errorCode("bob", "CancelTask", map[string]any{"id": got.ID}); code != -32001 {
		t.Errorf("bob's cancel answered %d, want -32001", code)
	}
	if c := h.task("alice", "CancelTask", map[string]any{"id": got.ID}); c.Status.State != a2a.StateCanceled {
		t.Fatalf("cancel answered %+v", c)
	}
	if code := h.errorCode("alice", "CancelTask", map[string]any{"id": got.ID}); code != -32002 {
		t.Errorf("second cancel answered %d, want -32002", code)
	}
	if code := h.errorCode("alice", "SubscribeToTask", map[string]any{"id": got.ID}); code != -32004 {
		t.Errorf("subscribing to a canceled task answered %d, want -32004", code)
	}
}

// TestCardVariesWithWhatItsURLsComeFrom: the card's URLs come from the
// Host and X-Forwarded-Proto the caller sent, so a shared cache may keep
// it (public) only per those headers: one request with X-Forwarded-Proto:
// http must not make a cache hand every client a card that sends their
// tokens over plain HTTP.
func TestCardVariesWithWhatItsURLsComeFrom(t *testing.T) {
	t.Parallel()
	h := newHarness(t, script(), nil)
	req, _ := http.NewRequest(http.MethodGet, h.srv.URL+a2a.CardPath, nil)
	req.Header.Set("X-Forwarded-Proto", "http")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	vary := strings.Join(resp.Header.Values("Vary"), ",")
	for _, h := range []string{"Host", "X-Forwarded-Proto"} {
		if !strings.Contains(vary, h) {
			t.Errorf("Vary %q does not name %s, which the card's URLs depend on", vary, h)
		}
	}
}
