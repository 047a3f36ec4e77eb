package jsonform_test

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/twostep/twostep/workflow"
	"github.com/twostep/twostep/workflow/jsonform"
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
		ApprovedBy: &workflow.ApprovedBy{StandingApprovalID: "sap\xff", GrantedBy: "u"},
		CreatedAt:  time.Date(2026, 3, 4, 5, 6, 7, 8, time.FixedZone("CET", 3600)),
	}
}

func TestStoredMessageIsJSONRoundTrip(t *testing.T) {
	full := fullMessage()
	v := reflect.ValueOf(full)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Errorf("fixture leaves Message.%s zero: set it (and shape it in jsonform.go)", v.Type().Field(i).Name)
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
		got, err := jsonform.Message(m)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want := decoded(t, m); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: jsonform.Message =\n%#v\nJSON round trip =\n%#v", name, got, want)
		}
	}
}

func TestStoredMessageSharesNoMemory(t *testing.T) {
	m := fullMessage()
	m.ID, m.Text, m.Role = "m", "t", "user" // valid: kept as they are
	got, err := jsonform.Message(m)
	if err != nil {
		t.Fatal(err)
	}
	got.Documents[0].Name = "changed"
	got.Learnings[0] = "changed"
	got.Parameters["nested"].(map[string]any)["list"].([]any)[1] = "changed"
	if m.Documents[0].Name != "n" || m.Learnings[0] != "l\xff" || m.Parameters["nested"].(map[string]any)["list"].([]any)[1] != "x" {
		t.Errorf("jsonform.Message's result shares memory with its argument: %#v", m)
	}
}

func TestStoredMessageFailsWhereMarshalFails(t *testing.T) {
	for name, m := range map[string]workflow.Message{
		"NaN":  {Parameters: map[string]any{"x": math.NaN()}},
		"Inf":  {Parameters: map[string]any{"x": []any{math.Inf(1)}}},
		"year": {CreatedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		"func": {Parameters: map[string]any{"f": func() {}}},
	} {
		if _, err := jsonform.Message(m); err == nil {
			t.Errorf("%s: jsonform.Message succeeded where json.Marshal fails", name)
		}
	}
}

// TestStagesIsJSONRoundTrip shapes stage tables: valid stages unchanged,
// invalid UTF-8 ones merged as decoding their encoding merges them.
func TestStagesIsJSONRoundTrip(t *testing.T) {
	for _, m := range []map[workflow.Stage]workflow.StageStats{
		nil,
		{},
		{workflow.StageOne: {Calls: 1, PromptTokens: 2}, "later": {Calls: 3}},
		{"bad\xff": {Calls: 1}, "bad\xfe": {Calls: 2}, "bad\ufffd": {Calls: 3}, workflow.StageTwo: {Calls: 4}},
	} {
		in := workflow.StageTableOf(m)
		var n jsonform.Shaper
		got := n.Stages(in)
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		var want workflow.StageTable
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		if n.Err != nil || !got.Equal(want) {
			t.Errorf("Stages(%v) = %v (%v), want %v", m, got.Map(), n.Err, want.Map())
		}
	}
}

// ShapedParams and ShapedValue say exactly when Params and Value would
// hand back something equal to their input: over every combination of
// the values below, nested two deep, in maps with and without omitempty.
func TestShapedMeansParamsWouldKeep(t *testing.T) {
	t.Parallel()
	leaves := []any{nil, true, "text", "bad \xff", 1.5, math.Inf(1), 3, int64(4), json.Number("5"),
		map[string]any(nil), map[string]any{}, []any(nil), []any{}, []string{"typed"}, struct{ A int }{1}}
	values := append([]any(nil), leaves...)
	for _, l := range leaves {
		values = append(values, map[string]any{"k": l}, []any{l, "x"}, map[string]any{"\xff": l})
	}
	var n jsonform.Shaper
	checkValue := func(v any) {
		var got any
		func() {
			defer func() { _ = recover() }() // Value on NaN or Inf only fails the Shaper
			got = n.Value(v)
		}()
		if same := reflect.DeepEqual(got, v); jsonform.ShapedValue(v) != same {
			t.Errorf("ShapedValue(%#v) = %v, but Value gives %#v", v, !same, got)
		}
	}
	for _, v := range values {
		checkValue(v)
		for _, omitEmpty := range []bool{false, true} {
			for _, m := range []map[string]any{nil, {}, {"a": v}, {"a": v, "b": 2.0}} {
				got := n.Params(m, omitEmpty)
				if same := reflect.DeepEqual(got, m); jsonform.ShapedParams(m, omitEmpty) != same {
					t.Errorf("ShapedParams(%#v, %v) = %v, but Params gives %#v", m, omitEmpty, !same, got)
				}
			}
		}
	}
}

// ShapedStrs says exactly when Strs would give back a slice equal to its
// input.
func TestShapedStrsMeansStrsWouldKeep(t *testing.T) {
	t.Parallel()
	for _, ss := range [][]string{nil, {}, {""}, {"a", "b"}, {"bad \xff"}, {"a", "\xe2\x80"}, {"é☃"}} {
		for _, keepEmpty := range []bool{false, true} {
			got := jsonform.Strs(ss, keepEmpty)
			if same := reflect.DeepEqual(got, ss); jsonform.ShapedStrs(ss, keepEmpty) != same {
				t.Errorf("ShapedStrs(%q, %v) = %v, but Strs gives %#v", ss, keepEmpty, !same, got)
			}
		}
	}
}

// A map whose keys are not valid UTF-8 takes the real round trip; when a
// value cannot be encoded, Params fails the Shaper rather than panic.
func TestParamsBadKeyAndBadValueFails(t *testing.T) {
	t.Parallel()
	var n jsonform.Shaper
	if got := n.Params(map[string]any{"\xff": math.Inf(1)}, false); got != nil || n.Err == nil {
		t.Fatalf("Params = %#v, err %v; want nil and an error", got, n.Err)
	}
}
