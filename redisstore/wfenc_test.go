package redisstore

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twostep/twostep/workflow"
)

// checkAppend holds the bytes appendJSON appends to a prefix equal to
// json.Marshal's, or, when Marshal refuses v, appendJSON declining with
// the prefix unchanged.
func checkAppend[T any](t *testing.T, name string, v *T, appendJSON func([]byte, *T) ([]byte, bool)) {
	t.Helper()
	want, err := json.Marshal(v)
	got, ok := appendJSON([]byte("prefix"), v)
	switch {
	case err != nil && (ok || string(got) != "prefix"):
		t.Errorf("%s: wrote %q, %v; json.Marshal fails: %v", name, got, ok, err)
	case err == nil && !ok:
		t.Errorf("%s: declined a value json.Marshal writes as %s", name, want)
	case err == nil && string(got) != "prefix"+string(want):
		t.Errorf("%s:\n got %s\nwant prefix%s", name, got, want)
	}
}

// TestAppendWorkflowIsMarshal holds appendWorkflow's bytes equal to
// json.Marshal's, and parseWorkflow's reading of them equal to
// json.Unmarshal's: with every field set, with each field in turn zero or
// empty, and on hand-built workflows of every shape the engine stores.
func TestAppendWorkflowIsMarshal(t *testing.T) {
	checkWorkflow(t, "every field", filledWorkflow(t))
	variants(t, filledWorkflow, func(name string, w *workflow.Workflow) { checkWorkflow(t, name, w) })
	for name, w := range workflowCases() {
		checkWorkflow(t, name, w)
	}
}

// checkWorkflow holds appendWorkflow's bytes equal to json.Marshal's, and
// parseWorkflow's reading of them (which must not decline) deeply equal
// to json.Unmarshal's.
func checkWorkflow(t *testing.T, name string, w *workflow.Workflow) {
	t.Helper()
	checkAppend(t, name, w, appendWorkflow)
	b, err := json.Marshal(w)
	if err != nil {
		return
	}
	got, ok := parseWorkflow(b)
	if !ok {
		t.Errorf("%s: parseWorkflow declined %s", name, b)
		return
	}
	var want workflow.Workflow
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if !reflect.DeepEqual(got, &want) {
		t.Errorf("%s: parseWorkflow(%s)\n = %+v\nwant %+v", name, b, got, &want)
	}
}

// workflowCases are hand-built workflows of every shape the engine stores.
func workflowCases() map[string]*workflow.Workflow {
	wf, _ := midRound()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	selection := &workflow.Selection{Action: "a.b", ActionObjective: "o", Learnings: []string{}, ParametersContext: "c",
		ParametersSchema: workflow.ParametersSchema{Fields: []workflow.FieldSpec{{Name: "x", Type: "string"}, {Name: "y", Type: "number", Required: true, Description: "d"}}}}
	return map[string]*workflow.Workflow{
		"zero":         {},
		"mid round":    wf,
		"created":      {ID: "wf1", UserID: "u", Mode: workflow.ModeReact, Status: workflow.StatusRunning, MaxSteps: 10, Title: "t", CreatedAt: at, UpdatedAt: at, Version: 1},
		"ended":        {ID: "wf1", Status: workflow.StatusCompleted, StopReason: workflow.StopCompleted, Error: "e", Stats: workflow.Stats{ByStage: workflow.StageTableOf(map[workflow.Stage]workflow.StageStats{})}},
		"html strings": {ID: "<script>&amp;</script>", Title: "a\u2028b\u2029c", Error: "\xff\xfe\x00\x1f\"\\/"},
		"unknown stage": {ID: "wf1", Stats: workflow.Stats{LLMCalls: 3, ByStage: workflow.StageTableOf(map[workflow.Stage]workflow.StageStats{
			workflow.StageOne: {Calls: 2}, "later<&>\xff": {Calls: 1, PromptTokens: 5}})}},
		"select phase": {ID: "wf1", Checkpoint: &workflow.Checkpoint{Step: 1, Phase: workflow.PhaseSelect}},
		"retrying stage 1": {ID: "wf1", Checkpoint: &workflow.Checkpoint{Step: 2, Phase: workflow.PhaseSelect, Attempt: 2,
			Feedback: []string{"missing field <action>"}, MaxTokens: 4096, Previous: "{\"a\":1}", CompactionSkipped: true}},
		"parameterize": {ID: "wf1", Checkpoint: &workflow.Checkpoint{Step: 2, Phase: workflow.PhaseParameterize, Selection: selection}},
		"nil lists":    {ID: "wf1", Checkpoint: &workflow.Checkpoint{Selection: &workflow.Selection{}, Parameters: map[string]any{}, Feedback: []string{}, Plan: []workflow.PlanStep{}}},
		"plan": {ID: "wf1", Mode: workflow.ModeActionPlan, Checkpoint: &workflow.Checkpoint{Step: 3, Phase: workflow.PhaseExecute, PlanIndex: 1, Replans: 1,
			Plan: []workflow.PlanStep{{Action: "a.b"}, {Action: "c.d", Parameters: map[string]any{"q": "<x>", "n": 1e21}, ResultLabel: "r", Documents: []string{"doc:1"}, Connection: "mail"},
				{Action: "e.f", Parameters: map[string]any{}, Documents: []string{}}}}},
		"awaiting approval": {ID: "wf1", Status: workflow.StatusAwaitingApproval,
			Checkpoint: &workflow.Checkpoint{Step: 4, Phase: workflow.PhaseExecute, Selection: selection, Parameters: map[string]any{"x": "y"},
				AfterReject: &workflow.Checkpoint{Step: 5, Phase: workflow.PhaseSelect}},
			PendingApproval: &workflow.PendingApproval{ID: "ap1", Round: 1, Step: 4, Action: "mail.send", Parameters: map[string]any{"to": "a@b"},
				Documents: []string{}, Effect: workflow.EffectWrite, RequestedAt: at, ExpiresAt: at.Add(24 * time.Hour)}},
		"pending approval, nil lists": {ID: "wf1", PendingApproval: &workflow.PendingApproval{ID: "ap1"}},
		"approved": {ID: "wf1", Checkpoint: &workflow.Checkpoint{Step: 4, Phase: workflow.PhaseExecute,
			Approval: &workflow.ApprovalGrant{ID: "ap1", Parameters: map[string]any{"to": "a@b"}}}},
		"approved, nil parameters": {ID: "wf1", Checkpoint: &workflow.Checkpoint{Approval: &workflow.ApprovalGrant{ID: "ap1"}}},
		"intent approved with constraints": {ID: "wf1", Checkpoint: &workflow.Checkpoint{Approval: &workflow.ApprovalGrant{ID: "ap1",
			Kind: workflow.ApprovalIntent, Constraints: map[string]any{"priority": map[string]any{"maximum": 2.0}}}}},
		"intent pending": {ID: "wf1", Status: workflow.StatusAwaitingApproval, PendingApproval: &workflow.PendingApproval{ID: "ap1",
			Kind: workflow.ApprovalIntent, ParametersContext: "ctx", Fields: []workflow.FieldSpec{{Name: "priority", Type: "integer", Required: true}}}},
		"trace origin":   {ID: "wf1", TraceContext: workflow.TraceContext{Origin: "00-a-b-01"}},
		"trace round":    {ID: "wf1", TraceContext: workflow.TraceContext{Round: "00-c-d-01"}},
		"trace both":     {ID: "wf1", TraceContext: workflow.TraceContext{Origin: "<o>", Round: "\xff"}},
		"forked":         {ID: "wf1", ForkedFrom: workflow.ForkOrigin{WorkflowID: "wf_0", Round: 2, Step: 4}},
		"forked, odd id": {ID: "wf1", ForkedFrom: workflow.ForkOrigin{WorkflowID: "<\xff>"}},
		"times with offsets": {ID: "wf1", CreatedAt: time.Date(1, 1, 1, 0, 0, 0, 1, time.FixedZone("", -(23*3600+59*60))),
			UpdatedAt: time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.FixedZone("", 23*3600))},
		"time with a monotonic reading": {ID: "wf1", CreatedAt: time.Now()},
	}
}

// TestAppendMessageIsMarshal is TestAppendWorkflowIsMarshal for messages.
func TestAppendMessageIsMarshal(t *testing.T) {
	checkAppend(t, "every field", filledMessage(t), appendMessage)
	variants(t, filledMessage, func(name string, m *workflow.Message) { checkAppend(t, name, m, appendMessage) })

	_, action := midRound()
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	cases := map[string]*workflow.Message{
		"zero":   {},
		"action": &action,
		"user": {ID: "m1", WorkflowID: "wf1", Seq: 1, Round: 1, Role: workflow.RoleUser, Text: "hello <b> & \u2028 \xff",
			Documents: []workflow.Document{{ID: "d1", WorkflowID: "wf1", MessageID: "m1", Name: "a&b.txt", MimeType: "text/plain", Size: 1 << 40}}, CreatedAt: at},
		"summary": {ID: "m2", Role: workflow.RoleSummary, Text: "s", Documents: []workflow.Document{}, CompactedThrough: 17, CreatedAt: at},
		"approved by a standing approval": {ID: "m3", Role: workflow.RoleAction, Documents: []workflow.Document{}, CreatedAt: at,
			ApprovedBy: &workflow.ApprovedBy{StandingApprovalID: "sap_1", GrantedBy: "alice"}},
		"failed step": {ID: "m3", Role: workflow.RoleAction, Action: "a.b", Status: workflow.MessageError, Findings: "f", Summary: "s",
			DocumentsLabel: "round1_step2_results", Learnings: []string{"l1", ""}, Parameters: map[string]any{"n": nil, "list": []any{}}},
		"empty lists": {ID: "m4", Parameters: map[string]any{}, Learnings: []string{}, Documents: []workflow.Document{}},
	}
	for name, m := range cases {
		checkAppend(t, name, m, appendMessage)
	}
}

// TestAppendDeclines holds that the encoders leave to encoding/json what
// Marshal refuses or they do not write, and that encodeWith then gives
// encoding/json's bytes or its error.
func TestAppendDeclines(t *testing.T) {
	deep := &workflow.Checkpoint{Phase: workflow.PhaseSelect}
	for range maxCheckpointDepth + 1 {
		deep = &workflow.Checkpoint{Phase: workflow.PhaseExecute, AfterReject: deep}
	}
	workflows := map[string]func(*workflow.Workflow){
		"year past 9999": func(w *workflow.Workflow) { w.CreatedAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) },
		"year before 0":  func(w *workflow.Workflow) { w.UpdatedAt = time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC) },
		"offset of a day": func(w *workflow.Workflow) {
			w.UpdatedAt = time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("", 24*3600))
		},
		"approval expiry":        func(w *workflow.Workflow) { w.PendingApproval.ExpiresAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) },
		"NaN parameter":          func(w *workflow.Workflow) { w.Checkpoint.Parameters = map[string]any{"x": math.NaN()} },
		"channel in a plan step": func(w *workflow.Workflow) { w.Checkpoint.Plan[0].Parameters = map[string]any{"c": make(chan int)} },
		"infinite grant":         func(w *workflow.Workflow) { w.Checkpoint.Approval.Parameters = map[string]any{"x": math.Inf(1)} },
		"pending function":       func(w *workflow.Workflow) { w.PendingApproval.Parameters = map[string]any{"f": func() {}} },
		"deep afterReject":       func(w *workflow.Workflow) { w.Checkpoint.AfterReject = deep },
	}
	for name, change := range workflows {
		w := filledWorkflow(t)
		change(w)
		checkDecline(t, name, w, appendWorkflow)
	}
	messages := map[string]func(*workflow.Message){
		"year past 9999":    func(m *workflow.Message) { m.CreatedAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) },
		"NaN parameter":     func(m *workflow.Message) { m.Parameters = map[string]any{"x": []any{math.NaN()}} },
		"complex parameter": func(m *workflow.Message) { m.Parameters = map[string]any{"x": complex(1, 2)} },
	}
	for name, change := range messages {
		m := filledMessage(t)
		change(m)
		checkDecline(t, name, m, appendMessage)
	}
}

// checkDecline holds that appendJSON declines v, leaving dst as it was,
// and that encodeWith gives json.Marshal's bytes or fails as it does.
func checkDecline[T any](t *testing.T, name string, v *T, appendJSON func([]byte, *T) ([]byte, bool)) {
	t.Helper()
	if got, ok := appendJSON([]byte("prefix"), v); ok || string(got) != "prefix" {
		t.Errorf("%s: wrote %.40q…, %v; want it to decline", name, got, ok)
	}
	enc := getEncoder()
	defer enc.release()
	args, err := encodeWith(enc, nil, v, appendJSON)
	want, wantErr := json.Marshal(v)
	if (err != nil) != (wantErr != nil) {
		t.Errorf("%s: encodeWith error %v, json.Marshal's %v", name, err, wantErr)
	} else if err == nil {
		enc.resolve(args)
		if got := argBytes(args[0]); !bytes.Equal(got, want) {
			t.Errorf("%s: encodeWith = %s, want %s", name, got, want)
		}
	}
}

// fuzzTime is a time from fuzzed numbers: any instant within ±17,000
// years, in a zone of up to ±30 hours (Marshal refuses a day or more).
func fuzzTime(sec int64, off int) time.Time {
	return time.Unix(sec%(1<<39), sec%1e9).In(time.FixedZone("", off%(30*3600)))
}

// fuzzParams is a parameter map from fuzzed values (nil for shape 0).
func fuzzParams(shape uint, s1, s2 string, n int, m int64) map[string]any {
	switch shape % 4 {
	case 0:
		return nil
	case 1:
		return map[string]any{}
	case 2:
		return map[string]any{s1: s2, s2: float64(m) / float64(n|1), "l": []any{s1, float64(n), n%2 == 0, nil, map[string]any{s2: []any{}}}}
	}
	return map[string]any{s1: n, "m": m} // typed values: Marshal's path
}

// fuzzStrs is nil, empty, or two strings, by shape.
func fuzzStrs(shape uint, s1, s2 string) []string {
	switch shape % 3 {
	case 0:
		return nil
	case 1:
		return []string{}
	}
	return []string{s1, s2}
}

// FuzzAppendWorkflow compares appendWorkflow with json.Marshal, and
// parseWorkflow with json.Unmarshal, on workflows built from fuzzed
// strings, numbers and times, shape choosing which parts exist and which
// lists are nil, empty or filled.
func FuzzAppendWorkflow(f *testing.F) {
	f.Add("wf1", "<title> & \u2028", 3, int64(1764151659), uint64(0))
	f.Add("\xff\xfe", "\x00\x1f\x7f\"\\", -1, int64(-5), uint64(0xffffffffffffffff))
	f.Add("", "", 0, int64(0), uint64(0x5a5a5a5a5a5a))
	f.Add("a", "b", 86400, int64(253402300800), uint64(0x123456789))
	f.Fuzz(func(t *testing.T, s1, s2 string, n int, m int64, shape uint64) {
		bits := func(k, width uint) uint { return uint(shape>>k) & (1<<width - 1) }
		w := &workflow.Workflow{ID: s1, UserID: s2, Mode: workflow.ModeName(s1), Status: workflow.Status(s2), StopReason: workflow.StopReason(s1),
			Round: n, Step: -n, MaxSteps: n / 3, Title: s2, Error: s1, Version: m,
			Stats:     workflow.Stats{LLMCalls: n, PromptTokens: int(m), CompletionTokens: -n, Actions: 1},
			CreatedAt: fuzzTime(m, n), UpdatedAt: fuzzTime(m/7, -n)}
		switch bits(0, 2) {
		case 1:
			w.Stats.ByStage = workflow.StageTableOf(map[workflow.Stage]workflow.StageStats{})
		case 2:
			w.Stats.ByStage = workflow.StageTableOf(map[workflow.Stage]workflow.StageStats{workflow.StagePlan: {Calls: n}, workflow.StageTwo: {PromptTokens: int(m)}})
		case 3:
			w.Stats.ByStage = workflow.StageTableOf(map[workflow.Stage]workflow.StageStats{workflow.Stage(s1): {Calls: n}, workflow.StageOne: {Calls: 1}})
		}
		if bits(2, 1) == 1 {
			cp := &workflow.Checkpoint{Step: n, Phase: workflow.Phase(s2), Parameters: fuzzParams(bits(3, 2), s1, s2, n, m),
				Failures: n % 3, Attempt: n % 2, Feedback: fuzzStrs(bits(5, 2), s1, s2), MaxTokens: int(m % 5), Previous: s1,
				PlanIndex: n % 4, Replans: int(m % 3), CompactionSkipped: n%2 == 0}
			if bits(7, 1) == 1 {
				cp.Selection = &workflow.Selection{Action: s1, ActionObjective: s2, Learnings: fuzzStrs(bits(8, 2), s2, s1),
					RequiredInputDocuments: fuzzStrs(bits(10, 2), s1, s1), RequiredConnection: s2, ParametersContext: s1}
				if bits(12, 1) == 1 {
					cp.Selection.ParametersSchema.Fields = []workflow.FieldSpec{{Name: s1, Type: s2, Required: n > 0, Description: s1}}
				}
			}
			if bits(13, 1) == 1 {
				cp.Plan = []workflow.PlanStep{{Action: s1, Parameters: fuzzParams(bits(14, 2), s2, s1, n, m), ResultLabel: s2,
					Documents: fuzzStrs(bits(16, 2), s1, s2), Connection: s1}}
			}
			if bits(18, 1) == 1 {
				cp.Approval = &workflow.ApprovalGrant{ID: s2, Parameters: fuzzParams(bits(19, 2), s1, s2, n, m)}
			}
			if bits(21, 1) == 1 {
				cp.AfterReject = &workflow.Checkpoint{Step: n + 1, Phase: workflow.Phase(s1), Feedback: fuzzStrs(bits(22, 2), s2, s2)}
			}
			w.Checkpoint = cp
		}
		if bits(24, 1) == 1 {
			w.PendingApproval = &workflow.PendingApproval{ID: s1, Round: n, Step: n, Action: s2, ActionObjective: s1,
				Parameters: fuzzParams(bits(25, 2), s2, s1, n, m), Documents: fuzzStrs(bits(27, 2), s1, s2), Connection: s2,
				Effect: workflow.Effect(s1), RequestedAt: fuzzTime(m/3, n*7), ExpiresAt: fuzzTime(m/5, n)}
		}
		if bits(29, 1) == 1 {
			w.TraceContext.Origin = s1
		}
		if bits(30, 1) == 1 {
			w.TraceContext.Round = s2
		}
		if bits(31, 1) == 1 {
			w.ForkedFrom = workflow.ForkOrigin{WorkflowID: s2, Round: n, Step: n + 1}
		}
		checkWorkflow(t, "fuzzed", w)
	})
}

// FuzzAppendMessage compares appendMessage with json.Marshal on messages
// built from fuzzed values, shape choosing which lists are nil, empty or
// filled.
func FuzzAppendMessage(f *testing.F) {
	f.Add("m1", "<text> & \u2028", 3, int64(1764151659), uint64(0))
	f.Add("\xff\xfe", "\x00\x1f\x7f\"\\", -1, int64(-5), uint64(0xffffffffffffffff))
	f.Add("", "", 0, int64(0), uint64(0x5a5a5a))
	f.Add("a", "b", 86400, int64(253402300800), uint64(0x123))
	f.Fuzz(func(t *testing.T, s1, s2 string, n int, m int64, shape uint64) {
		bits := func(k, width uint) uint { return uint(shape>>k) & (1<<width - 1) }
		msg := &workflow.Message{ID: s1, WorkflowID: s2, Seq: m, Round: n, Step: -n, Role: workflow.Role(s1), Text: s2,
			Action: s1, ActionObjective: s2, Parameters: fuzzParams(bits(0, 2), s1, s2, n, m), Status: workflow.MessageStatus(s2),
			DocumentsLabel: s1, Summary: s2, Findings: s1, Learnings: fuzzStrs(bits(2, 2), s2, s1), CompactedThrough: m / 3,
			CreatedAt: fuzzTime(m, n)}
		switch bits(4, 2) {
		case 1:
			msg.Documents = []workflow.Document{}
		case 2, 3:
			msg.Documents = []workflow.Document{{ID: s1, WorkflowID: s2, MessageID: s1, Name: s2, MimeType: s1, Size: m},
				{ID: s2, Size: int64(n)}}
		}
		checkAppend(t, "fuzzed", msg, appendMessage)
	})
}

// TestCommitArgsUseTheEncoders holds the state and message commitArgs send
// equal to Marshal's when the encoders decline (a time Marshal refuses
// makes the commit fail, as it did with encoding/json alone).
func TestCommitArgsUseTheEncoders(t *testing.T) {
	wf, msg := midRound()
	deep := wf.Clone()
	deep.Checkpoint.AfterReject = &workflow.Checkpoint{}
	for range maxCheckpointDepth + 1 {
		deep.Checkpoint.AfterReject = &workflow.Checkpoint{AfterReject: deep.Checkpoint.AfterReject}
	}
	odd := msg
	odd.Parameters = map[string]any{"n": int64(1) << 60}
	for name, w := range map[string]*workflow.Workflow{"mid round": wf, "deep": deep} {
		c := workflow.Commit{Workflow: w, ExpectedVersion: w.Version - 1, Messages: []workflow.Message{msg, odd}}
		args, _, release, err := commitArgs(w, c, Options{}, testHead(w))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		msg.WorkflowID, odd.WorkflowID = w.ID, w.ID
		if got, want := string(argBytes(args[4])), marshalOf(t, w); got != want {
			t.Errorf("%s: state %s, want %s", name, got, want)
		}
		for i, m := range []workflow.Message{msg, odd} {
			if got, want := string(argBytes(args[13+i])), marshalOf(t, m); got != want {
				t.Errorf("%s: message %d is %s, want %s", name, i, got, want)
			}
		}
		release()
	}
	bad := wf.Clone()
	bad.UpdatedAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, _, _, err := commitArgs(bad, workflow.Commit{Workflow: bad}, Options{}, testHead(bad)); err == nil || !strings.Contains(err.Error(), "cannot be encoded") {
		t.Errorf("commitArgs of a time past year 9999: err %v", err)
	}
}

// BenchmarkEncodeState compares appendWorkflow and appendMessage with
// encoding/json on the mid-round workflow and its action message.
func BenchmarkEncodeState(b *testing.B) {
	wf, msg := midRound()
	b.Run("appendWorkflow", func(b *testing.B) {
		benchAppend(b, func(buf []byte) ([]byte, bool) { return appendWorkflow(buf, wf) })
	})
	b.Run("json.Encoder/workflow", func(b *testing.B) { benchEncoder(b, wf) })
	b.Run("appendMessage", func(b *testing.B) {
		benchAppend(b, func(buf []byte) ([]byte, bool) { return appendMessage(buf, &msg) })
	})
	b.Run("json.Encoder/message", func(b *testing.B) { benchEncoder(b, &msg) })
}

func benchAppend(b *testing.B, appendJSON func([]byte) ([]byte, bool)) {
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		var ok bool
		if buf, ok = appendJSON(buf[:0]); !ok {
			b.Fatal("declined")
		}
	}
	b.SetBytes(int64(len(buf)))
}

func benchEncoder(b *testing.B, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if err := enc.Encode(v); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(buf.Len()))
}
