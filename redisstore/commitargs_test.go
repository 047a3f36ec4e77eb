package redisstore

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/twostep/twostep/workflow"
)

// TestCommitArgsAreMarshal holds the encodings commitArgs sends, from its
// pooled buffer, byte for byte equal to json.Marshal's, commit after
// commit (a reused buffer must not leak one commit's bytes into the next).
func TestCommitArgsAreMarshal(t *testing.T) {
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
	for round := range 3 {
		c := workflow.Commit{Workflow: wf, ExpectedVersion: 2, Messages: []workflow.Message{m, m},
			Traces: []workflow.Trace{tr}, Documents: []workflow.DocumentContent{doc}}
		args, _, release, err := commitArgs(wf, c, Options{}, testHead(wf))
		if err != nil {
			t.Fatal(err)
		}
		got := func(i int) string { return string(argBytes(args[i])) }
		if got(4) != want(wf) || got(13) != want(m) || got(14) != want(m) || args[15] != "t1" || got(16) != want(tr) ||
			args[17] != "d1" || got(18) != want(doc.Document) || string(argBytes(args[19])) != "hi" {
			t.Errorf("round %d: commitArgs = %d arguments, not the encodings expected", round, len(args))
		}
		release()
		tr.Prompt = append(tr.Prompt, tr.Prompt...) // the next commit's encodings grow
	}
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

// argBytes is the bytes go-redis writes for a script argument commitArgs
// encoded (an *encodedArg) or passed as is ([]byte).
func argBytes(a any) []byte {
	switch v := a.(type) {
	case *encodedArg:
		b, _ := v.MarshalBinary()
		return b
	case []byte:
		return v
	}
	return nil
}

// testHead is a commit head for commitArgs without a Store: no call
// start, the key prefix "pfx".
func testHead(wf *workflow.Workflow) *commitHead {
	return &commitHead{wfPrefix: "pfx", boxedID: wf.ID, boxedUser: wf.UserID}
}
