package memstore

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twostep/twostep/workflow"
	"github.com/twostep/twostep/workflow/jsonform"
)

// roundTrip is what the store used to keep and hand back: v through
// json.Marshal and json.Unmarshal.
func roundTrip[T any](t *testing.T, v T) T {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("Unmarshal: %v", err)
	}
	return out
}

// requireAllSet fails when an exported field of v (recursively through
// structs, pointers and the first element of slices) is zero, so a field
// added to the stored types later must be added to the fixtures below
// (and, when it holds memory of its own, to clone.go).
// A pointer to a type being checked already (Checkpoint.AfterReject) is
// only required to be set.
func requireAllSet(t *testing.T, path string, v reflect.Value, outer ...reflect.Type) {
	t.Helper()
	if v.IsZero() && v.Kind() != reflect.Bool {
		t.Errorf("%s is zero in the fixture: set it (and copy it in clone.go if it holds memory)", path)
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if !slices.Contains(outer, v.Type().Elem()) {
			requireAllSet(t, path, v.Elem(), outer...)
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Struct && v.Len() > 0 {
			requireAllSet(t, path+"[0]", v.Index(0), outer...)
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			return
		}
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				requireAllSet(t, path+"."+f.Name, v.Field(i), append(outer, v.Type())...)
			}
		}
	}
}

var (
	local  = time.Date(2026, 3, 4, 5, 6, 7, 890, time.Local)
	paris  = time.Date(2026, 3, 4, 5, 6, 7, 8, time.FixedZone("CET", 3600))
	params = map[string]any{
		"s": "text", "n": 2.5, "b": true, "null": nil,
		"int": 7, "num": json.Number("12"), "typed": []string{"a"}, "struct": struct{ A int }{1},
		"nested":     map[string]any{"list": []any{1.0, "x", map[string]any{}, []any{}}, "nilList": []any(nil), "nilMap": map[string]any(nil)},
		"bad\xffkey": "v", "badValue": "a\xffb\xc0",
	}
)

func fullCheckpoint() *workflow.Checkpoint {
	return &workflow.Checkpoint{
		Phase: workflow.PhaseExecute, Step: 3,
		Selection: &workflow.Selection{
			Action: "ai.process", ActionObjective: "obj\xfe", Learnings: []string{}, RequiredInputDocuments: []string{"d1"},
			RequiredConnection: "c", ParametersContext: "ctx",
			ParametersSchema: workflow.ParametersSchema{Fields: []workflow.FieldSpec{{Name: "n", Type: "string", Required: true, Description: "d"}}},
		},
		Parameters: params, Failures: 1, Attempt: 2, Feedback: []string{"f"}, MaxTokens: 3, Previous: "prev",
		Plan:      []workflow.PlanStep{{Action: "a", Parameters: map[string]any{}, ResultLabel: "r", Documents: []string{"x"}, Connection: "c"}, {Action: "b", Documents: []string{}}},
		PlanIndex: 1, Replans: 1, CompactionSkipped: true,
		Approval: &workflow.ApprovalGrant{ID: "g", Parameters: map[string]any{"k": 1}, Kind: workflow.ApprovalIntent,
			Constraints: map[string]any{"k": map[string]any{"maximum": 2}}, ApprovedBy: &workflow.ApprovedBy{StandingApprovalID: "s", GrantedBy: "u"}},
		AfterReject: &workflow.Checkpoint{Phase: workflow.PhaseSelect, Parameters: map[string]any{}, Feedback: []string{}, Plan: []workflow.PlanStep{}},
	}
}

func fullWorkflow() *workflow.Workflow {
	return &workflow.Workflow{
		ID: "wf_1", UserID: "u", Mode: workflow.ModeReact, Status: workflow.StatusRunning, StopReason: workflow.StopLoop,
		Round: 1, Step: 2, MaxSteps: 3, Title: "title", Error: "err\xff",
		Stats: workflow.Stats{LLMCalls: 1, PromptTokens: 2, CompletionTokens: 3, Actions: 4,
			ByStage: workflow.StageTableOf(map[workflow.Stage]workflow.StageStats{workflow.StageOne: {Calls: 1, PromptTokens: 2, CompletionTokens: 3}, "later\xff": {Calls: 4}})},
		CreatedAt: local, UpdatedAt: paris, Version: 5,
		Checkpoint: fullCheckpoint(),
		PendingApproval: &workflow.PendingApproval{
			ID: "ap", Round: 1, Step: 2, Action: "a", ActionObjective: "o", Parameters: map[string]any{}, Documents: []string{},
			Connection: "c", Effect: "write", RequestedAt: time.Now(), ExpiresAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
			Kind: workflow.ApprovalIntent, ParametersContext: "ctx\xff", Fields: []workflow.FieldSpec{{Name: "n", Type: "string", Required: true, Description: "d"}},
		},
		TraceContext: workflow.TraceContext{Origin: "o", Round: "r"},
		ForkedFrom:   workflow.ForkOrigin{WorkflowID: "wf\xff", Round: 1, Step: 2},
		QueuedRounds: []workflow.QueuedRound{
			{MessageID: "m\xff", Prompt: "p", Interrupt: true, QueuedAt: paris,
				Documents: []workflow.Document{{ID: "d", WorkflowID: "wf_1", MessageID: "m", Name: "n\xfe", MimeType: "text/plain", Size: 3}}},
			{MessageID: "m2", Prompt: "q", Documents: []workflow.Document{}, QueuedAt: local},
		},
		QueueEdits: 2,
	}
}

func fullMessage() workflow.Message {
	return workflow.Message{
		ID: "m", WorkflowID: "wf_1", Seq: 3, Round: 1, Step: 2, Role: workflow.RoleAction, Text: "t\xff", Action: "a",
		ActionObjective: "o", Parameters: params, Status: workflow.MessageSuccess, DocumentsLabel: "l",
		Documents: []workflow.Document{{ID: "d", WorkflowID: "wf_1", MessageID: "m", Name: "n", MimeType: "text/plain", Size: 3}},
		Summary:   "s", Findings: "f", Learnings: []string{"l"}, CompactedThrough: 2, CreatedAt: time.Now(),
		ApprovedBy: &workflow.ApprovedBy{StandingApprovalID: "sap_1", GrantedBy: "u\xff"},
	}
}

func fullTrace() workflow.Trace {
	return workflow.Trace{
		ID: "tr", WorkflowID: "wf_1", Round: 1, Step: 2, Stage: workflow.StageOne, Attempt: 1, Template: "t",
		Inputs:   map[string]string{"USER_PROMPT": "bad \xff bytes", "VALIDATION_FEEDBACK": ""},
		Prompt:   []workflow.PromptMessage{{Role: workflow.PromptSystem, Content: "sys"}, {Role: workflow.PromptUser, Content: "bad \xff\xfe bytes"}},
		Response: "resp", Parsed: json.RawMessage(" {\"a\" : \"<b>&\u2028\", \"n\": [1, 2]}\n"), Error: "e", Model: "m",
		PromptTokens: 1, CompletionTokens: 2, CachedTokens: 4, CacheWriteTokens: 5, LatencyMs: 3, FinishReason: "stop", Retries: 1, OutputMode: workflow.OutputText,
		Ungrounded: []string{"ticketId", "bad \xff path"}, CreatedAt: paris,
	}
}

// TestStoredFormIsJSONRoundTrip holds the store's Go-value form equal to
// the JSON round trip it replaced, for every field of the stored types.
func TestStoredFormIsJSONRoundTrip(t *testing.T) {
	wf := fullWorkflow()
	requireAllSet(t, "Workflow", reflect.ValueOf(wf))
	got, err := storeWorkflow(wf, false)
	if err != nil {
		t.Fatal(err)
	}
	if want := roundTrip(t, wf); !reflect.DeepEqual(got, want) {
		t.Errorf("workflow:\n got %#v\nwant %#v", got, want)
	}
	if !reflect.DeepEqual(copyWorkflow(got), got) {
		t.Error("copyWorkflow changed the workflow")
	}
	// The zero workflow and checkpoint: every omitempty field empty.
	empty := &workflow.Workflow{Checkpoint: &workflow.Checkpoint{}}
	if got, err := storeWorkflow(empty, false); err != nil || !reflect.DeepEqual(got, roundTrip(t, empty)) {
		t.Errorf("empty workflow: got %#v, %v; want %#v", got, err, roundTrip(t, empty))
	}

	m := fullMessage()
	requireAllSet(t, "Message", reflect.ValueOf(m))
	gotM, err := jsonform.Message(m)
	if err != nil {
		t.Fatal(err)
	}
	if want := roundTrip(t, m); !reflect.DeepEqual(gotM, want) {
		t.Errorf("message:\n got %#v\nwant %#v", gotM, want)
	}
	for _, m := range []workflow.Message{{}, {Documents: []workflow.Document{}, Learnings: []string{}, Parameters: map[string]any{}}} {
		if got, err := jsonform.Message(m); err != nil || !reflect.DeepEqual(got, roundTrip(t, m)) {
			t.Errorf("message %#v: got %#v, %v; want %#v", m, got, err, roundTrip(t, m))
		}
	}

	tr := fullTrace()
	requireAllSet(t, "Trace", reflect.ValueOf(tr))
	gotT, err := storeTrace(tr)
	if err != nil {
		t.Fatal(err)
	}
	if want := roundTrip(t, tr); !reflect.DeepEqual(gotT, want) {
		t.Errorf("trace:\n got %#v\nwant %#v", gotT, want)
	}
	for _, tr := range []workflow.Trace{{}, {Prompt: []workflow.PromptMessage{}, Parsed: json.RawMessage{}, Ungrounded: []string{}}, {Parsed: json.RawMessage("null")}} {
		if got, err := storeTrace(tr); err != nil || !reflect.DeepEqual(got, roundTrip(t, tr)) {
			t.Errorf("trace %#v: got %#v, %v; want %#v", tr, got, err, roundTrip(t, tr))
		}
	}
}

// TestStoreRefusesWhatMarshalRefuses: a value JSON cannot encode fails the
// commit as it did when the store encoded JSON.
func TestStoreRefusesWhatMarshalRefuses(t *testing.T) {
	for name, wf := range map[string]*workflow.Workflow{
		"NaN parameter":      {Checkpoint: &workflow.Checkpoint{Parameters: map[string]any{"x": []any{math.NaN()}}}},
		"infinite parameter": {PendingApproval: &workflow.PendingApproval{Parameters: map[string]any{"x": math.Inf(1)}}},
		"channel parameter":  {Checkpoint: &workflow.Checkpoint{Parameters: map[string]any{"x": make(chan int)}}},
		"year 10000":         {UpdatedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		if _, err := json.Marshal(wf); err == nil {
			t.Fatalf("%s: Marshal accepts it; the case tests nothing", name)
		}
		if _, err := storeWorkflow(wf, false); err == nil {
			t.Errorf("%s: storeWorkflow accepted what Marshal refuses", name)
		}
	}
	if _, err := storeTrace(workflow.Trace{Parsed: json.RawMessage(`{"a":`)}); err == nil {
		t.Error("storeTrace accepted invalid parsed JSON")
	}
	if _, err := jsonform.Message(workflow.Message{Parameters: map[string]any{"x": math.NaN()}}); err == nil {
		t.Error("jsonform.Message accepted a NaN parameter")
	}
}

// TestNoSharedMemory: nested parameter values, slices and parsed JSON are
// the store's own, both ways.
func TestNoSharedMemory(t *testing.T) {
	nested := map[string]any{"list": []any{"a", map[string]any{"k": "v"}}}
	wf := &workflow.Workflow{Checkpoint: &workflow.Checkpoint{Parameters: map[string]any{"n": nested}, Feedback: []string{"f"}}}
	stored, err := storeWorkflow(wf, false)
	if err != nil {
		t.Fatal(err)
	}
	nested["list"].([]any)[1].(map[string]any)["k"] = "changed"
	wf.Checkpoint.Feedback[0] = "changed"
	out := copyWorkflow(stored)
	out.Checkpoint.Parameters["n"].(map[string]any)["list"].([]any)[0] = "changed"
	if s := stored.Checkpoint; s.Parameters["n"].(map[string]any)["list"].([]any)[1].(map[string]any)["k"] != "v" ||
		s.Parameters["n"].(map[string]any)["list"].([]any)[0] != "a" || s.Feedback[0] != "f" {
		t.Errorf("stored checkpoint shares memory with a caller: %#v", s)
	}

	tr := workflow.Trace{Prompt: []workflow.PromptMessage{{Role: "user", Content: "p"}}, Parsed: json.RawMessage(`{"a":1}`), Ungrounded: []string{"u"}}
	st, err := storeTrace(tr)
	if err != nil {
		t.Fatal(err)
	}
	tr.Prompt[0].Content, tr.Parsed[1], tr.Ungrounded[0] = "changed", 'X', "changed"
	c := copyTrace(st)
	c.Prompt[0].Content, c.Parsed[1], c.Ungrounded[0] = "changed", 'X', "changed"
	if st.Prompt[0].Content != "p" || string(st.Parsed) != `{"a":1}` || st.Ungrounded[0] != "u" {
		t.Errorf("stored trace shares memory with a caller: %#v", st)
	}

	m, err := jsonform.Message(workflow.Message{Documents: []workflow.Document{{ID: "d"}}, Learnings: []string{"l"}})
	if err != nil {
		t.Fatal(err)
	}
	cm := copyMessage(m)
	cm.Documents[0].ID, cm.Learnings[0] = "changed", "changed"
	if m.Documents[0].ID != "d" || m.Learnings[0] != "l" {
		t.Errorf("stored message shares memory with a caller: %#v", m)
	}
}

func TestStr(t *testing.T) {
	for _, s := range []string{"", "ascii", "é✓", "a\xffb", "\xe2\x82", "\xc0\x80x", strings.Repeat("ok", 100) + "\xff"} {
		if got, want := jsonform.Str(s), roundTrip(t, s); got != want {
			t.Errorf("jsonform.Str(%q) = %q, want %q", s, got, want)
		}
	}
}

// Commit hands back the workflow it was given, not a copy, with the new
// version and as it was given (not the stored form), as redisstore does:
// the engine runs on from it. The store keeps its own
// copy, so changing the returned workflow changes nothing stored. Reads
// give the stored form.
func TestCommitReturnsTheGivenWorkflow(t *testing.T) {
	ctx := t.Context()
	s := New()
	wf := &workflow.Workflow{ID: "wf_1", UserID: "u", Status: workflow.StatusRunning,
		Checkpoint: &workflow.Checkpoint{Phase: workflow.PhaseExecute, Parameters: map[string]any{}}}
	want := wf.Clone()
	want.Version = 1
	got, _, err := s.Commit(ctx, workflow.Commit{Workflow: wf})
	if err != nil {
		t.Fatal(err)
	}
	if got != wf || !reflect.DeepEqual(got, want) {
		t.Errorf("Commit returned %#v, want the given %#v at version 1", got, want)
	}
	got.Checkpoint.Parameters["k"] = "changed"
	got.Checkpoint.Phase = workflow.PhaseSelect
	got.Stats.ByStage = workflow.StageTableOf(map[workflow.Stage]workflow.StageStats{workflow.StageOne: {Calls: 1}})
	read, err := s.GetWorkflow(ctx, wf.ID)
	if err != nil {
		t.Fatal(err)
	}
	if read.Checkpoint.Parameters != nil || read.Checkpoint.Phase != workflow.PhaseExecute || read.Stats.ByStage.Len() != 0 {
		t.Errorf("read %#v, want the stored form of what was committed: parameters nil (the JSON round trip of an empty map under omitempty), phase execute, no stages", read.Checkpoint)
	}
}

// TestHandoverKeepsWhatIsInStoredForm: with keep (Commit.Handover),
// storeWorkflow returns its argument itself exactly when a copy would
// equal it, never changes it, and otherwise returns what it returns
// without keep, which is what a JSON round trip gives. Checked on the stored form of the full workflow, and on
// that form with each of its leaves in turn given a value that is not in
// stored form (invalid UTF-8, a local time with a monotonic reading, an
// int parameter, an empty slice or map where the form may have nil).
func TestHandoverKeepsWhatIsInStoredForm(t *testing.T) {
	full := fullWorkflow()
	full.Stats.ByStage = workflow.StageTableOf(map[workflow.Stage]workflow.StageStats{workflow.StageOne: {Calls: 1}})
	stored, err := storeWorkflow(full, false)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now() // one value: equal in both copies below
	type mutation struct {
		path string
		set  func(reflect.Value)
	}
	var mutations []mutation
	walkLeaves("Workflow", reflect.ValueOf(stored).Elem(), func(path string, v reflect.Value) {
		switch {
		case v.Type() == reflect.TypeFor[time.Time]():
			mutations = append(mutations, mutation{path + " (local, monotonic)", func(v reflect.Value) { v.Set(reflect.ValueOf(now)) }})
		case v.Kind() == reflect.String:
			mutations = append(mutations, mutation{path + " (invalid UTF-8)", func(v reflect.Value) { v.SetString("bad \xff") }})
		case v.Type() == reflect.TypeFor[map[string]any]():
			mutations = append(mutations,
				mutation{path + " (int value)", func(v reflect.Value) { v.Set(reflect.ValueOf(map[string]any{"i": 3})) }},
				mutation{path + " (empty)", func(v reflect.Value) { v.Set(reflect.ValueOf(map[string]any{})) }},
				mutation{path + " (nil)", func(v reflect.Value) { v.Set(reflect.Zero(v.Type())) }})
		case v.Type() == reflect.TypeFor[[]string]():
			mutations = append(mutations,
				mutation{path + " (invalid UTF-8)", func(v reflect.Value) { v.Set(reflect.ValueOf([]string{"ok", "bad \xff"})) }},
				mutation{path + " (empty)", func(v reflect.Value) { v.Set(reflect.ValueOf([]string{})) }})
		case v.Kind() == reflect.Slice:
			mutations = append(mutations, mutation{path + " (empty)", func(v reflect.Value) { v.Set(reflect.MakeSlice(v.Type(), 0, 0)) }})
		}
	})
	if len(mutations) < 50 {
		t.Fatalf("only %d mutations found: the walk misses the workflow's fields", len(mutations))
	}
	// at returns the value at the mutation's path in w.
	at := func(w *workflow.Workflow, mutation string) reflect.Value {
		var found reflect.Value
		walkLeaves("Workflow", reflect.ValueOf(w).Elem(), func(path string, v reflect.Value) {
			if !found.IsValid() && strings.HasPrefix(mutation, path+" (") {
				found = v
			}
		})
		if !found.IsValid() {
			t.Fatalf("%s: not found again", mutation)
		}
		return found
	}
	check := func(name string, a, b *workflow.Workflow) {
		t.Helper()
		got, err := storeWorkflow(a, true)
		want, wantErr := storeWorkflow(b, false)
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("%s: keep gives error %v, copy %v", name, err, wantErr)
		}
		if err != nil {
			return
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: keep gives\n%#v\ncopy gives\n%#v", name, got, want)
		}
		if rt := roundTrip(t, b); !reflect.DeepEqual(want, rt) {
			t.Fatalf("%s: the stored form is\n%#v\na JSON round trip gives\n%#v", name, want, rt)
		}
		if same := reflect.DeepEqual(want, b); (got == a) != same {
			t.Fatalf("%s: kept the argument: %v; but a copy equals it: %v", name, got == a, same)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%s: storeWorkflow with keep changed its argument", name)
		}
	}
	check("the stored form", roundTrip(t, stored), roundTrip(t, stored))
	if got, _ := storeWorkflow(stored, true); got != stored {
		t.Fatal("the stored form was not kept")
	}
	for _, m := range mutations {
		a, b := roundTrip(t, stored), roundTrip(t, stored)
		m.set(at(a, m.path))
		m.set(at(b, m.path))
		check(m.path, a, b)
	}
}

// A commit with Handover keeps the workflow it is given as the stored
// state when it is in stored form, and copies it otherwise; a read hands
// out a copy either way; a refused commit leaves the workflow as it was,
// its version included.
func TestCommitHandover(t *testing.T) {
	ctx := t.Context()
	s := New()
	now := time.Now().UTC() // UTC drops the monotonic reading: stored form
	wf := &workflow.Workflow{ID: "wf_handover", UserID: "u", Mode: workflow.ModeReact, Status: workflow.StatusRunning,
		CreatedAt: now, UpdatedAt: now, Checkpoint: &workflow.Checkpoint{Phase: workflow.PhaseSelect, Parameters: map[string]any{"n": 1.5}}}
	got, _, err := s.Commit(ctx, workflow.Commit{Workflow: wf, Handover: true})
	if err != nil {
		t.Fatal(err)
	}
	if got != wf || got.Version != 1 || s.wfs[wf.ID].state != wf {
		t.Fatalf("stored state %p, returned %p (version %d), given %p: want the given workflow kept", s.wfs[wf.ID].state, got, got.Version, wf)
	}
	if read, err := s.GetWorkflow(ctx, wf.ID); err != nil || read == wf || !reflect.DeepEqual(read, wf) {
		t.Fatalf("GetWorkflow = %p (%v), want an equal copy of %p", read, err, wf)
	}

	stale := *wf
	stale.Status = workflow.StatusCompleted
	if _, _, err := s.Commit(ctx, workflow.Commit{Workflow: &stale, ExpectedVersion: 7, Handover: true}); workflow.KindOf(err) != workflow.KindConflict {
		t.Fatalf("stale commit: %v, want a conflict", err)
	}
	if stale.Version != 1 || s.wfs[wf.ID].state != wf {
		t.Fatalf("the refused commit changed its workflow's version to %d or the stored state", stale.Version)
	}

	local := *wf
	local.UpdatedAt = time.Now() // local, with a monotonic reading: not in stored form
	got, _, err = s.Commit(ctx, workflow.Commit{Workflow: &local, ExpectedVersion: 1, Handover: true})
	if err != nil {
		t.Fatal(err)
	}
	if kept := s.wfs[wf.ID].state; kept == &local || got != &local || kept.UpdatedAt != local.UpdatedAt.UTC() || kept.Checkpoint != wf.Checkpoint {
		t.Fatalf("a workflow not in stored form: kept %p (given %p), its checkpoint %p (the form's %p)", kept, &local, kept.Checkpoint, wf.Checkpoint)
	}
}

// walkLeaves calls visit with the path of every time, string, parameter
// map and slice under v (a slice's elements after it), through pointers
// and the exported fields of structs.
func walkLeaves(path string, v reflect.Value, visit func(path string, v reflect.Value)) {
	switch {
	case v.Type() == reflect.TypeFor[time.Time](), v.Kind() == reflect.String, v.Kind() == reflect.Map,
		v.Type() == reflect.TypeFor[[]string]():
		visit(path, v)
	case v.Kind() == reflect.Slice:
		visit(path, v)
		for i := range v.Len() {
			walkLeaves(path+"["+strconv.Itoa(i)+"]", v.Index(i), visit)
		}
	case v.Kind() == reflect.Pointer && !v.IsNil():
		walkLeaves(path, v.Elem(), visit)
	case v.Kind() == reflect.Struct:
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				walkLeaves(path+"."+f.Name, v.Field(i), visit)
			}
		}
	}
}
