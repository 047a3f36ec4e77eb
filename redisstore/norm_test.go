package redisstore

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twostep/twostep/workflow"
)

// decoded is what a read of m's encoding gives: json.Marshal, then
// json.Unmarshal.
func decoded(t *testing.T, m workflow.Message) workflow.Message {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	var out workflow.Message
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("Unmarshal: %v", err)
	}
	return out
}

// fullMessage sets every field of a message, with the values JSON
// reshapes: invalid UTF-8, non-JSON parameter types, a time with an offset.
func fullMessage() workflow.Message {
	return workflow.Message{
		ID: "m\xff1", WorkflowID: "wf", Seq: 4, Round: 2, Step: 3, Role: "assistant\xc0", Text: "text \xfe",
		Action: "ai.process", ActionObjective: "obj", Status: "done", DocumentsLabel: "docs",
		Parameters: map[string]any{
			"s": "text", "n": 2.5, "b": true, "null": nil, "int": 7, "num": json.Number("12"),
			"typed": []string{"a"}, "struct": struct{ A int }{1}, "badValue": "a\xffb",
			"nested": map[string]any{"list": []any{1.0, "x", map[string]any{}, []any{}}, "nilList": []any(nil), "nilMap": map[string]any(nil)},
		},
		Documents: []workflow.Document{{ID: "d\xff", WorkflowID: "wf", MessageID: "m1", Name: "n", MimeType: "text/plain", Size: 3}},
		Summary:   "sum", Findings: "found", Learnings: []string{"l\xff"}, CompactedThrough: 3,
		CreatedAt: time.Date(2026, 3, 4, 5, 6, 7, 8, time.FixedZone("CET", 3600)),
	}
}

func TestStoredMessageIsJSONRoundTrip(t *testing.T) {
	full := fullMessage()
	v := reflect.ValueOf(full)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Errorf("fixture leaves Message.%s zero: set it (and shape it in norm.go)", v.Type().Field(i).Name)
		}
	}
	cases := map[string]func(m *workflow.Message){
		"full":    func(*workflow.Message) {},
		"utc now": func(m *workflow.Message) { m.CreatedAt = time.Now().UTC() },
		"local":   func(m *workflow.Message) { m.CreatedAt = time.Date(2026, 3, 4, 5, 6, 7, 890, time.Local) },
		"empty": func(m *workflow.Message) {
			m.Parameters, m.Documents, m.Learnings = map[string]any{}, []workflow.Document{}, []string{}
		},
		"nil":       func(m *workflow.Message) { m.Parameters, m.Documents, m.Learnings = nil, nil, nil },
		"bad key":   func(m *workflow.Message) { m.Parameters["bad\xffkey"] = "v" },
		"zero time": func(m *workflow.Message) { m.CreatedAt = time.Time{} },
		"plain":     func(m *workflow.Message) { *m = workflow.Message{ID: "m", WorkflowID: "wf", Role: "user", Text: "hi"} },
	}
	for name, change := range cases {
		m := fullMessage()
		change(&m)
		got, err := storedMessage(m)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want := decoded(t, m); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: storedMessage =\n%#v\nJSON round trip =\n%#v", name, got, want)
		}
	}
}

func TestStoredMessageSharesNoMemory(t *testing.T) {
	m := fullMessage()
	m.ID, m.Text, m.Role = "m", "t", "user" // valid: kept as they are
	got, err := storedMessage(m)
	if err != nil {
		t.Fatal(err)
	}
	got.Documents[0].Name = "changed"
	got.Learnings[0] = "changed"
	got.Parameters["nested"].(map[string]any)["list"].([]any)[1] = "changed"
	if m.Documents[0].Name != "n" || m.Learnings[0] != "l\xff" || m.Parameters["nested"].(map[string]any)["list"].([]any)[1] != "x" {
		t.Errorf("storedMessage's result shares memory with its argument: %#v", m)
	}
}

func TestStoredMessageFailsWhereMarshalFails(t *testing.T) {
	for name, m := range map[string]workflow.Message{
		"NaN":  {Parameters: map[string]any{"x": math.NaN()}},
		"Inf":  {Parameters: map[string]any{"x": []any{math.Inf(1)}}},
		"year": {CreatedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		"func": {Parameters: map[string]any{"f": func() {}}},
	} {
		if _, err := storedMessage(m); err == nil {
			t.Errorf("%s: storedMessage succeeded where json.Marshal fails", name)
		}
	}
}

// TestCommitArgsAreMarshal holds the encodings commitArgs sends, from its
// pooled buffer, byte for byte equal to json.Marshal's, commit after
// commit (a reused buffer must not leak one commit's bytes into the next).
func TestCommitArgsAreMarshal(t *testing.T) {
	wf := &workflow.Workflow{ID: "wf1", UserID: "u1", Status: workflow.StatusRunning, Version: 3, Title: "<b>title</b> & \xff"}
	m := fullMessage()
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
		args, _, release, err := commitArgs(wf, c, Options{}, "pfx")
		if err != nil {
			t.Fatal(err)
		}
		got := func(i int) string { return string(args[i].([]byte)) }
		if got(4) != want(wf) || got(13) != want(m) || got(14) != want(m) || args[15] != "t1" || got(16) != want(tr) ||
			args[17] != "d1" || got(18) != want(doc.Document) || string(args[19].([]byte)) != "hi" {
			t.Errorf("round %d: commitArgs = %q", round, args)
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
