package memstore

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/twostep/twostep/workflow"
)

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
		Mode: workflow.ModeState(`{"plan":[{"action":"a","parameters":{},"resultLabel":"r","documents":["x"],"connection":"c"},{"action":"b","parameters":null}],"planIndex":1,"replans":1,"compactionSkipped":true}`),
		Approval: &workflow.ApprovalGrant{ID: "g", Parameters: map[string]any{"k": 1}, Kind: workflow.ApprovalIntent,
			Constraints: map[string]any{"k": map[string]any{"maximum": 2}}, ApprovedBy: &workflow.ApprovedBy{StandingApprovalID: "s", GrantedBy: "u"}},
		AfterReject: &workflow.Checkpoint{Phase: workflow.PhaseSelect, Parameters: map[string]any{}, Feedback: []string{}},
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

// TestDeepCopy: a copy (own) equals its original and shares none of its
// memory: no pointer, map or slice array reachable through exported fields
// and interface values of the copy is one of the original's.
func TestDeepCopy(t *testing.T) {
	for name, v := range map[string]any{
		"workflow": fullWorkflow(),
		"message":  fullMessage(),
		"trace":    fullTrace(),
		"empty":    &workflow.Workflow{Checkpoint: &workflow.Checkpoint{Parameters: map[string]any{}, Feedback: []string{}}},
	} {
		t.Run(name, func(t *testing.T) {
			c := v
			own(&c)
			if !reflect.DeepEqual(c, v) {
				t.Fatalf("copy\n%#v\ndiffers from\n%#v", c, v)
			}
			orig := map[uintptr]string{}
			addresses("", reflect.ValueOf(v), func(path string, p uintptr) { orig[p] = path })
			if len(orig) < 3 {
				t.Fatalf("only %d addresses found: the walk misses the fixture's fields", len(orig))
			}
			addresses("", reflect.ValueOf(c), func(path string, p uintptr) {
				if o, ok := orig[p]; ok {
					t.Errorf("the copy's %s shares memory with the original's %s", path, o)
				}
			})
		})
	}
}

// addresses calls visit with the address of every non-empty pointer, map
// and slice array under v, through exported fields and interface values.
func addresses(path string, v reflect.Value, visit func(path string, p uintptr)) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			visit(path, v.Pointer())
			addresses(path, v.Elem(), visit)
		}
	case reflect.Interface:
		if !v.IsNil() {
			addresses(path, v.Elem(), visit)
		}
	case reflect.Map:
		if !v.IsNil() {
			visit(path, v.Pointer())
			for it := v.MapRange(); it.Next(); {
				addresses(path+"["+it.Key().String()+"]", it.Value(), visit)
			}
		}
	case reflect.Slice:
		if v.Cap() > 0 {
			visit(path, v.Pointer())
		}
		for i := range v.Len() {
			addresses(path+"[]", v.Index(i), visit)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				addresses(path+"."+f.Name, v.Field(i), visit)
			}
		}
	}
}

// TestReadsGiveWhatWasCommitted: every read gives back what the commit
// was given, as it was, with the version, seq and workflow ids the store
// sets.
func TestReadsGiveWhatWasCommitted(t *testing.T) {
	ctx := t.Context()
	s := New()
	wf, m, tr := fullWorkflow(), fullMessage(), fullTrace()
	wantWf := *wf
	wantWf.Version = 1
	wantM := m
	wantM.WorkflowID, wantM.Seq = wf.ID, 1
	wantM.Documents = slices.Clone(m.Documents)
	for i := range wantM.Documents {
		wantM.Documents[i].WorkflowID = wf.ID
	}

	_, msgs, err := s.Commit(ctx, workflow.Commit{Workflow: wf, Messages: []workflow.Message{m}, Traces: []workflow.Trace{tr}})
	if err != nil {
		t.Fatal(err)
	}
	claim, err := s.ClaimRoundLoad(ctx, wf.ID, "owner", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.GetWorkflow(ctx, wf.ID)
	if err != nil {
		t.Fatal(err)
	}
	list, _, err := s.ListAll(ctx, workflow.Page{})
	if err != nil || len(list) != 1 {
		t.Fatalf("ListAll = %d workflows, %v; want 1", len(list), err)
	}
	for read, w := range map[string]*workflow.Workflow{"GetWorkflow": got, "ClaimRoundLoad": claim.Workflow, "ListAll": list[0]} {
		if !reflect.DeepEqual(w, &wantWf) {
			t.Errorf("%s:\n got %#v\nwant %#v", read, w, &wantWf)
		}
	}
	read, err := s.Messages(ctx, wf.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for from, ms := range map[string][]workflow.Message{"Commit": msgs, "Messages": read, "ClaimRoundLoad": claim.Messages} {
		if len(ms) != 1 || !reflect.DeepEqual(ms[0], wantM) {
			t.Errorf("%s:\n got %#v\nwant [%#v]", from, ms, wantM)
		}
	}
	traces, err := s.Traces(ctx, wf.ID)
	if err != nil {
		t.Fatal(err)
	}
	one, err := s.GetTrace(ctx, tr.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(traces) != 1 || !reflect.DeepEqual(traces[0], tr) || !reflect.DeepEqual(one, tr) {
		t.Errorf("traces:\n got %#v and %#v\nwant %#v", traces, one, tr)
	}
}

// TestStoreRefusesWhatRedisRefuses: a message or trace JSON cannot encode
// fails the commit with KindInvalid, as on Redis, and stores nothing.
func TestStoreRefusesWhatRedisRefuses(t *testing.T) {
	ctx := t.Context()
	wf := func() *workflow.Workflow {
		return &workflow.Workflow{ID: "wf_1", UserID: "u", Status: workflow.StatusRunning}
	}
	for name, c := range map[string]workflow.Commit{
		"NaN message parameter": {Workflow: wf(), Messages: []workflow.Message{{ID: "m", Parameters: map[string]any{"x": []any{math.NaN()}}}}},
		"channel in a message":  {Workflow: wf(), Messages: []workflow.Message{{ID: "m", Parameters: map[string]any{"x": make(chan int)}}}},
		"message in year 10000": {Workflow: wf(), Messages: []workflow.Message{{ID: "m", CreatedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}}},
		"invalid parsed JSON":   {Workflow: wf(), Traces: []workflow.Trace{{ID: "tr", WorkflowID: "wf_1", Parsed: json.RawMessage(`{"a":`)}}},
		"trace in year 10000":   {Workflow: wf(), Traces: []workflow.Trace{{ID: "tr", WorkflowID: "wf_1", CreatedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}}},
	} {
		if _, err := json.Marshal(c); err == nil {
			t.Fatalf("%s: Marshal accepts it; the case tests nothing", name)
		}
		s := New()
		if _, _, err := s.Commit(ctx, c); workflow.KindOf(err) != workflow.KindInvalid {
			t.Errorf("%s: Commit = %v, want KindInvalid", name, err)
		}
		if _, err := s.GetWorkflow(ctx, "wf_1"); workflow.KindOf(err) != workflow.KindNotFound {
			t.Errorf("%s: the refused commit stored its workflow (%v)", name, err)
		}
	}
	if err := New().AppendTrace(ctx, workflow.Trace{ID: "tr", WorkflowID: "wf_1", Parsed: json.RawMessage("{")}); workflow.KindOf(err) != workflow.KindInvalid {
		t.Errorf("AppendTrace of invalid parsed JSON = %v, want KindInvalid", err)
	}
}

// TestNoSharedMemory: nested parameter values, slices and parsed JSON are
// the store's own, both ways.
func TestNoSharedMemory(t *testing.T) {
	ctx := t.Context()
	s := New()
	nested := map[string]any{"list": []any{"a", map[string]any{"k": "v"}}}
	wf := &workflow.Workflow{ID: "wf_1", UserID: "u", Status: workflow.StatusRunning,
		Checkpoint: &workflow.Checkpoint{Parameters: map[string]any{"n": nested}, Feedback: []string{"f"}}}
	m := workflow.Message{ID: "m", Documents: []workflow.Document{{ID: "d"}}, Learnings: []string{"l"}}
	tr := workflow.Trace{ID: "tr", WorkflowID: "wf_1", Prompt: []workflow.PromptMessage{{Role: "user", Content: "p"}}, Parsed: json.RawMessage(`{"a":1}`), Ungrounded: []string{"u"}}
	_, msgs, err := s.Commit(ctx, workflow.Commit{Workflow: wf, Messages: []workflow.Message{m}, Traces: []workflow.Trace{tr}})
	if err != nil {
		t.Fatal(err)
	}
	if m.Documents[0].WorkflowID != "" {
		t.Errorf("Commit set the workflow id in the caller's document: %#v", m.Documents[0])
	}
	// Change everything the caller gave and everything it was given.
	nested["list"].([]any)[1].(map[string]any)["k"] = "changed"
	wf.Checkpoint.Feedback[0] = "changed"
	m.Documents[0].ID, m.Learnings[0] = "changed", "changed"
	tr.Prompt[0].Content, tr.Parsed[1], tr.Ungrounded[0] = "changed", 'X', "changed"
	msgs[0].Documents[0].ID, msgs[0].Learnings[0] = "changed", "changed"
	read, err := s.GetWorkflow(ctx, wf.ID)
	if err != nil {
		t.Fatal(err)
	}
	read.Checkpoint.Parameters["n"].(map[string]any)["list"].([]any)[0] = "changed"
	readTr, err := s.GetTrace(ctx, tr.ID)
	if err != nil {
		t.Fatal(err)
	}
	readTr.Prompt[0].Content, readTr.Parsed[1], readTr.Ungrounded[0] = "changed", 'X', "changed"

	got, err := s.GetWorkflow(ctx, wf.ID)
	if err != nil {
		t.Fatal(err)
	}
	if c := got.Checkpoint; c.Parameters["n"].(map[string]any)["list"].([]any)[1].(map[string]any)["k"] != "v" ||
		c.Parameters["n"].(map[string]any)["list"].([]any)[0] != "a" || c.Feedback[0] != "f" {
		t.Errorf("stored checkpoint shares memory with a caller: %#v", c)
	}
	gotMs, err := s.Messages(ctx, wf.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if gm := gotMs[0]; gm.Documents[0].ID != "d" || gm.Learnings[0] != "l" {
		t.Errorf("stored message shares memory with a caller: %#v", gm)
	}
	gotTr, err := s.GetTrace(ctx, tr.ID)
	if err != nil {
		t.Fatal(err)
	}
	if gotTr.Prompt[0].Content != "p" || string(gotTr.Parsed) != `{"a":1}` || gotTr.Ungrounded[0] != "u" {
		t.Errorf("stored trace shares memory with a caller: %#v", gotTr)
	}
}

// Commit hands back the workflow it was given, not a copy, with the new
// version, as redisstore does: the engine runs on from it. The store keeps
// its own copy, so changing the returned workflow changes nothing stored.
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
	if len(read.Checkpoint.Parameters) != 0 || read.Checkpoint.Phase != workflow.PhaseExecute || read.Stats.ByStage.Len() != 0 {
		t.Errorf("read %#v, want what was committed: no parameters, phase execute, no stages", read.Checkpoint)
	}
}

// A commit with Handover keeps the workflow it is given as the stored
// state; a read hands out a copy; a refused commit leaves the workflow as
// it was, its version included.
func TestCommitHandover(t *testing.T) {
	ctx := t.Context()
	s := New()
	now := time.Now()
	wf := &workflow.Workflow{ID: "wf_handover", UserID: "u", Mode: workflow.ModeReact, Status: workflow.StatusRunning,
		CreatedAt: now, UpdatedAt: now, Checkpoint: &workflow.Checkpoint{Phase: workflow.PhaseSelect, Parameters: map[string]any{"n": 1.5}}}
	got, _, err := s.Commit(ctx, workflow.Commit{Workflow: wf, Handover: true})
	if err != nil {
		t.Fatal(err)
	}
	if got != wf || got.Version != 1 || s.wfs[wf.ID].state != wf {
		t.Fatalf("stored state %p, returned %p (version %d), given %p: want the given workflow kept", s.wfs[wf.ID].state, got, got.Version, wf)
	}
	if read, err := s.GetWorkflow(ctx, wf.ID); err != nil || read == wf || read.Checkpoint == wf.Checkpoint || !reflect.DeepEqual(read, wf) {
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

	// Without Handover the store keeps a copy of its own.
	next := *wf
	if _, _, err := s.Commit(ctx, workflow.Commit{Workflow: &next, ExpectedVersion: 1}); err != nil {
		t.Fatal(err)
	}
	if kept := s.wfs[wf.ID].state; kept == &next || kept.Checkpoint == next.Checkpoint || kept.Version != 2 || next.Version != 2 {
		t.Fatalf("a commit without Handover kept %p (given %p) at version %d", kept, &next, kept.Version)
	}
}

// A commit with Handover keeps its traces as given (TestNoSharedMemory
// holds that one without it copies them); a read still hands out a copy.
func TestCommitHandoverKeepsTraces(t *testing.T) {
	ctx := t.Context()
	s := New()
	wf := &workflow.Workflow{ID: "wf_tr", UserID: "u", Status: workflow.StatusRunning}
	tr := workflow.Trace{ID: "tr", WorkflowID: wf.ID, Prompt: []workflow.PromptMessage{{Role: "user", Content: "p"}}}
	if _, _, err := s.Commit(ctx, workflow.Commit{Workflow: wf, Traces: []workflow.Trace{tr}, Handover: true}); err != nil {
		t.Fatal(err)
	}
	stored := s.wfs[wf.ID].traces
	if len(stored) != 1 || &stored[0].t.Prompt[0] != &tr.Prompt[0] {
		t.Fatalf("the handed-over trace was copied: stored %+v", stored)
	}
	read, err := s.GetTrace(ctx, tr.ID)
	if err != nil {
		t.Fatal(err)
	}
	read.Prompt[0].Content = "changed"
	if tr.Prompt[0].Content != "p" {
		t.Errorf("a read shares the stored trace's prompt")
	}
}
