package redisstore

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twostep/twostep/workflow"
)

// TestCommitArgsAreRecords holds the script arguments commitArgs sends
// in their places (see commitScript) and each value's record as
// json.Marshal writes it, with the current layout, and the messages it
// returns: the committed ones, their own copies, whose JSON is the read's.
func TestCommitArgsAreRecords(t *testing.T) {
	wf := &workflow.Workflow{ID: "wf1", UserID: "u1", Status: workflow.StatusRunning, Version: 3, Title: "<b>title</b> & \xff"}
	// A message with every kind of value Marshal treats specially: invalid
	// UTF-8, HTML characters, numbers of several types, a time with an offset.
	m := workflow.Message{
		ID: "m\xff1", Role: "assistant", Text: "<text> & \xfe", Action: "ai.process",
		Parameters: map[string]any{"n": 2.5, "int": 7, "num": json.Number("12"), "typed": []string{"a"}, "nested": map[string]any{"list": []any{1.0, "x"}}},
		Documents:  []workflow.Document{{ID: "d\xff", MessageID: "m1", Name: "n", MimeType: "text/plain", Size: 3}},
		Learnings:  []string{"l\xff"},
		CreatedAt:  time.Date(2026, 3, 4, 5, 6, 7, 8, time.FixedZone("CET", 3600)),
	}
	m.WorkflowID, m.Seq, m.Documents[0].WorkflowID = "wf1", 0, "wf1"
	tr := workflow.Trace{ID: "t1", WorkflowID: "wf1", Prompt: []workflow.PromptMessage{{Role: "user", Content: strings.Repeat("prompt <x> ", 200)}}}
	doc := workflow.DocumentContent{Document: workflow.Document{ID: "d1", WorkflowID: "wf1", Name: "n", Size: 2}, Content: []byte("hi")}
	want := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	c := workflow.Commit{Workflow: wf, ExpectedVersion: 2, Messages: []workflow.Message{m, m},
		Traces: []workflow.Trace{tr}, Documents: []workflow.DocumentContent{doc}}
	args, msgs, err := commitArgs(wf, c, Options{}, testHead(wf))
	if err != nil {
		t.Fatal(err)
	}
	got := func(i int) string { b, _ := args[i].([]byte); return string(b) }
	if got(4) != want(stateRecord{layout, wf}) || got(13) != want(messageRecord{layout, &m}) || got(14) != got(13) ||
		args[15] != "t1" || got(16) != want(traceRecord{layout, &tr}) ||
		args[17] != "d1" || got(18) != want(documentRecord{layout, &doc.Document}) || got(19) != "hi" {
		t.Errorf("commitArgs = %d arguments, not the records expected: %q", len(args), args)
	}
	if !strings.HasPrefix(got(4), `{"layout":1,"id":"wf1",`) {
		t.Errorf("state record %s does not start with its layout", got(4))
	}
	var read workflow.Message
	if err := decodeMessage(args[13].([]byte), 0, &read); err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || !sameJSON(t, want(msgs[0]), want(read)) || !sameJSON(t, want(msgs[1]), want(read)) || msgs[0].Text != m.Text {
		t.Errorf("commitArgs messages encode as %s, %s; want the read %s", want(msgs[0]), want(msgs[1]), want(read))
	}
	msgs[0].Parameters["n"] = 0.0
	if m.Parameters["n"] != 2.5 || msgs[1].Parameters["n"] != 2.5 {
		t.Errorf("commitArgs messages share their parameters with the commit or each other")
	}
	if read.Text != "<text> & \ufffd" || read.Parameters["int"] != 7.0 || !read.CreatedAt.Equal(m.CreatedAt) {
		t.Errorf("read message = %+v: not the JSON round trip of %+v", read, m)
	}
}

// sameJSON reports whether JSON texts a and b hold the same value (an
// invalid byte is "\ufffd" in one and U+FFFD itself in the other).
func sameJSON(t *testing.T, a, b string) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal([]byte(a), &va); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(b), &vb); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(va, vb)
}

// TestKeysAreConcatenations holds the keys built in one allocation equal
// to the plain concatenations they replace (the layout Redis holds).
func TestKeysAreConcatenations(t *testing.T) {
	u := keys{prefix: "tw"}.user("a b@c")
	base := "tw:{u:a+b%40c}"
	if u.base != base || u.listing != base+":workflows" || u.running != base+":running" || u.wfPrefix != base+":wf:" {
		t.Errorf("user keys = %+v", u)
	}
	w, p := u.workflow("wf-1"), base+":wf:wf-1:"
	want := wfKeys{p + "state", p + "msgs", p + "docs", p + "docmeta", p + "traces", p + "tracedata", p + "lease"}
	if w != want {
		t.Errorf("workflow keys = %+v, want %+v", w, want)
	}
}

// testHead is a commit head for commitArgs without a Store: no call
// start, the key prefix "pfx".
func testHead(wf *workflow.Workflow) *commitHead {
	return &commitHead{wfPrefix: "pfx", boxedID: wf.ID, boxedUser: wf.UserID}
}
