package actionplan_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/modes/actionplan"
	"github.com/twostep/twostep/workflow"
)

const (
	stPlan   = workflow.StagePlan
	stRepair = workflow.StageRepair
)

// Wrapped and differently shaped plans all run the same two steps, through
// the shared executor, with one model call and no extra call at the end.
func TestPlanShapesRunTheSameRound(t *testing.T) {
	t.Parallel()
	plan := planJSON(echo("alpha", "first"), echo("beta", ""))
	obj, _ := json.Marshal(map[string]json.RawMessage{"actions": json.RawMessage(plan)})
	tests := []struct{ name, reply string }{
		{"bare array", plan},
		{"fenced array", "```json\n" + plan + "\n```"},
		{"prose-wrapped array", "Sure! Here is the plan:\n" + plan + "\nLet me know if you need more."},
		{"actions object", string(obj)},
		{"fenced actions object with trailing comma", "```\n" + strings.Replace(string(obj), "]}", ",]}", 1) + "\n```"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			store, reg := newStore(), enginetest.NewRegistry()
			model := scripted.New(tc.reply)
			e := startEngine(t, testConfig("a"), store, model, reg)
			wf := wait(t, e, create(t, e, "echo alpha then beta", 5).ID)

			if wf.Status != workflow.StatusCompleted || wf.StopReason != workflow.StopCompleted {
				t.Fatalf("ended %s/%s (%s), want completed/completed", wf.Status, wf.StopReason, wf.Error)
			}
			if wf.Stats.LLMCalls != 1 || wf.Stats.Actions != 2 {
				t.Errorf("stats = %+v, want 1 model call and 2 actions", wf.Stats)
			}
			msgs := messages(t, store, wf.ID)
			want := []shape{
				{1, 0, workflow.RoleUser, "", ""},
				{1, 1, workflow.RoleAction, enginetest.Echo, workflow.MessageSuccess},
				{1, 2, workflow.RoleAction, enginetest.Echo, workflow.MessageSuccess},
				{1, 3, workflow.RoleAssistant, "", ""},
			}
			if diff := cmp.Diff(want, shapes(msgs)); diff != "" {
				t.Fatalf("messages (-want +got):\n%s", diff)
			}
			if got := msgs[1].DocumentsLabel; got != "first" {
				t.Errorf("first step's documentsLabel = %q, want its resultLabel", got)
			}
			if got := msgs[2].DocumentsLabel; got != "round1_step2_test_echo" {
				t.Errorf("second step's documentsLabel = %q, want the default label", got)
			}
			if msgs[1].Summary == "" || msgs[1].ActionObjective != "plan step 1 of 2" {
				t.Errorf("first action message: summary %q, objective %q", msgs[1].Summary, msgs[1].ActionObjective)
			}
			final := msgs[3].Text
			for _, s := range []string{"2 steps", "1. test.echo (success)", "2. test.echo (success)", "echo.txt"} {
				if !strings.Contains(final, s) {
					t.Errorf("final message lacks %q:\n%s", s, final)
				}
			}
			calls := reg.Calls()
			if len(calls) != 2 || calls[0].Parameters["text"] != "alpha" || calls[1].IdempotencyKey != wf.ID+":1:2" {
				t.Errorf("executions = %+v, want echo alpha then echo beta (key %s:1:2)", calls, wf.ID)
			}
			if diff := cmp.Diff([]workflow.Stage{stPlan}, stages(model.Calls())); diff != "" {
				t.Errorf("model calls (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompleteStepEndsTheRoundWithItsMessage(t *testing.T) {
	t.Parallel()
	store, reg := newStore(), enginetest.NewRegistry()
	model := scripted.New(planJSON(echo("alpha", ""), complete("here is your answer"), echo("never", "")))
	e := startEngine(t, testConfig("a"), store, model, reg)
	wf := wait(t, e, create(t, e, "echo alpha and answer", 5).ID)
	if wf.Status != workflow.StatusCompleted || wf.StopReason != workflow.StopCompleted || wf.Step != 2 {
		t.Fatalf("ended %s/%s at step %d, want completed/completed at step 2", wf.Status, wf.StopReason, wf.Step)
	}
	msgs := messages(t, store, wf.ID)
	if n := len(msgs); n != 3 || msgs[2].Role != workflow.RoleAssistant || msgs[2].Text != "here is your answer" {
		t.Fatalf("messages = %+v, want user, echo, and the complete step's answer", shapes(msgs))
	}
	if n := len(reg.Calls()); n != 1 {
		t.Errorf("%d executions, want 1 (the step after workflow.complete is dropped)", n)
	}
	tr := modelTraces(t, store, wf.ID)
	if len(tr) != 1 || !strings.Contains(tr[0].Error, "step 3 (test.echo) dropped: comes after workflow.complete") {
		t.Errorf("plan trace error = %q, want the dropped step explained", tr[0].Error)
	}
}

// The repair call shows the model its own reply; after a repaired plan the
// round runs normally.
func TestUnparseablePlanIsRepaired(t *testing.T) {
	t.Parallel()
	store, reg := newStore(), enginetest.NewRegistry()
	bad := "I would first echo alpha, then finish."
	model := scripted.New(bad, "Fixed:\n"+planJSON(echo("alpha", ""), complete("done")))
	e := startEngine(t, testConfig("a"), store, model, reg)
	wf := wait(t, e, create(t, e, "echo alpha", 5).ID)
	if wf.Status != workflow.StatusCompleted || wf.StopReason != workflow.StopCompleted || wf.Stats.LLMCalls != 2 {
		t.Fatalf("ended %s/%s after %d calls, want completed after 2", wf.Status, wf.StopReason, wf.Stats.LLMCalls)
	}
	calls := model.Calls()
	if diff := cmp.Diff([]workflow.Stage{stPlan, stRepair}, stages(calls)); diff != "" {
		t.Fatalf("model calls (-want +got):\n%s", diff)
	}
	repair := calls[1].Text()
	for _, s := range []string{bad, "no JSON value", "- test.echo"} {
		if !strings.Contains(repair, s) {
			t.Errorf("repair prompt lacks %q:\n%s", s, repair)
		}
	}
	tr := modelTraces(t, store, wf.ID)
	if len(tr) != 2 || tr[0].Error == "" || tr[1].Error != "" || tr[1].Template != "repair" || tr[1].Attempt != 2 || len(tr[1].Parsed) == 0 {
		t.Errorf("traces = %+v, want a rejected plan call then an accepted repair call", tr)
	}
	if got := messages(t, store, wf.ID); len(got) != 3 || got[2].Text != "done" {
		t.Errorf("messages = %+v, want user, echo, done", shapes(got))
	}
}

var longProse = strings.Repeat("no plan. ", 400)

func TestPlanUnavailable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		replies   []string
		stages    []workflow.Stage
		wantInMsg []string
	}{
		{"unparseable twice", []string{"no plan from me", "still no plan"},
			[]workflow.Stage{stPlan, stRepair}, []string{"could not be read as a plan", `"no plan from me"`}},
		{"every step invalid", []string{planJSON(step{Action: "test.nope"}, step{Action: enginetest.Echo})},
			[]workflow.Stage{stPlan}, []string{"none of the 2 planned steps was valid", `"test.nope" is not registered`}},
		{"empty plan", []string{"[]"}, []workflow.Stage{stPlan}, []string{"the model planned no step"}},
		// The excerpt of the reply goes up to 2,000 bytes, as SAGE's fallback.
		{"long prose twice", []string{longProse, longProse}, []workflow.Stage{stPlan, stRepair}, []string{longProse[:1990]}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			store, reg := newStore(), enginetest.NewRegistry()
			model := scripted.New(tc.replies...)
			e := startEngine(t, testConfig("a"), store, model, reg)
			wf := wait(t, e, create(t, e, "do it", 5).ID)
			if wf.Status != workflow.StatusFailed || wf.StopReason != workflow.StopPlanUnavailable || wf.Error == "" {
				t.Fatalf("ended %s/%s (%q), want failed/plan_unavailable with an explanation", wf.Status, wf.StopReason, wf.Error)
			}
			if diff := cmp.Diff(tc.stages, stages(model.Calls())); diff != "" {
				t.Errorf("model calls (-want +got):\n%s", diff)
			}
			msgs := messages(t, store, wf.ID)
			if len(msgs) != 2 || msgs[1].Role != workflow.RoleAssistant {
				t.Fatalf("messages = %+v, want the user message and one assistant message", shapes(msgs))
			}
			for _, s := range append(tc.wantInMsg, "plan for this round was unavailable") {
				if !strings.Contains(msgs[1].Text, s) {
					t.Errorf("assistant message lacks %q:\n%s", s, msgs[1].Text)
				}
			}
			if n := len(reg.Calls()); n != 0 {
				t.Errorf("%d actions ran, want none", n)
			}
		})
	}
}

func TestInvalidStepsAreDroppedAndTraced(t *testing.T) {
	t.Parallel()
	store, reg := newStore(), enginetest.NewRegistry()
	plan := planJSON(
		step{Action: "test.unknown", Parameters: map[string]any{"text": "x"}},
		step{Action: enginetest.Echo, Parameters: map[string]any{}},
		echo("kept", ""),
		step{Action: enginetest.Remote, Parameters: map[string]any{"connectionReference": "not-mine"}},
		step{Action: enginetest.Remote, Parameters: map[string]any{"connectionReference": "crm"}},
		echo("bad ref", "", "docList:nobody_made_this"),
	)
	model := scripted.New(plan)
	e := startEngine(t, testConfig("a"), store, model, reg)
	wf := wait(t, e, create(t, e, "echo and call the crm", 10).ID)
	if wf.Status != workflow.StatusCompleted || wf.Stats.Actions != 2 {
		t.Fatalf("ended %s/%s with %d actions, want completed with 2", wf.Status, wf.StopReason, wf.Stats.Actions)
	}
	calls := reg.Calls()
	if len(calls) != 2 || calls[0].Action != enginetest.Echo || calls[1].Action != enginetest.Remote ||
		calls[1].Connection == nil || calls[1].Connection.Label != "crm" || len(calls[1].Parameters) != 0 {
		t.Fatalf("executions = %+v, want echo, then remote with connection crm and no parameters", calls)
	}
	tr := modelTraces(t, store, wf.ID)[0]
	for _, s := range []string{
		`step 1 (test.unknown) dropped: action "test.unknown" is not registered`,
		`step 2 (test.echo) dropped: /: missing property "text"`,
		`step 4 (test.remote) dropped: parameters.connectionReference: connection "not-mine" is not one of yours`,
		`step 6 (test.echo) dropped: parameters.documentList[0]: document reference "docList:nobody_made_this"`,
	} {
		if !strings.Contains(tr.Error, s) {
			t.Errorf("plan trace error lacks %q:\n%s", s, tr.Error)
		}
	}
	if strings.Contains(tr.Error, "more dropped steps") {
		t.Errorf("plan trace error says lines were left out, but only 4 steps were dropped:\n%s", tr.Error)
	}
	var parsed actionplan.Validated
	if err := json.Unmarshal(tr.Parsed, &parsed); err != nil {
		t.Fatalf("trace parsed: %v", err)
	}
	if len(parsed.Steps) != 2 || len(parsed.Dropped) != 4 || parsed.Dropped[1].Index != 1 {
		t.Errorf("trace parsed = %+v, want 2 steps and 4 dropped", parsed)
	}
}

// A plan with many invalid steps keeps its trace's error text short; the
// parsed plan still lists every dropped step.
func TestManyDroppedStepsKeepTheTraceShort(t *testing.T) {
	t.Parallel()
	steps := []step{echo("kept", "")}
	for range 30 {
		steps = append(steps, step{Action: "no.such"})
	}
	store := newStore()
	e := startEngine(t, testConfig("a"), store, scripted.New(planJSON(steps...)), enginetest.NewRegistry())
	wf := wait(t, e, create(t, e, "echo", 5).ID)
	if wf.Status != workflow.StatusCompleted || wf.Stats.Actions != 1 {
		t.Fatalf("ended %s/%s with %d actions, want completed with 1", wf.Status, wf.StopReason, wf.Stats.Actions)
	}
	tr := modelTraces(t, store, wf.ID)[0]
	if n := strings.Count(tr.Error, "dropped:"); n != 20 || !strings.Contains(tr.Error, "and 10 more dropped steps") {
		t.Errorf("trace error has %d dropped lines:\n%s\nwant 20 and a note of 10 more", n, tr.Error)
	}
	var parsed actionplan.Validated
	if err := json.Unmarshal(tr.Parsed, &parsed); err != nil || len(parsed.Dropped) != 30 {
		t.Errorf("parsed lists %d dropped steps (%v), want 30", len(parsed.Dropped), err)
	}
}

// A plan longer than the round's steps is cut to maxSteps; the round then
// ends like a React round at its limit.
func TestLongPlanIsTruncatedToMaxSteps(t *testing.T) {
	t.Parallel()
	store, reg := newStore(), enginetest.NewRegistry()
	model := scripted.New(planJSON(echo("1", ""), echo("2", ""), echo("3", ""), echo("4", ""), complete("done")))
	e := startEngine(t, testConfig("a"), store, model, reg)
	wf := wait(t, e, create(t, e, "echo four times", 3).ID)
	if wf.Status != workflow.StatusCompleted || wf.StopReason != workflow.StopMaxSteps || wf.Stats.Actions != 3 {
		t.Fatalf("ended %s/%s with %d actions, want completed/max_steps with 3", wf.Status, wf.StopReason, wf.Stats.Actions)
	}
	var parsed actionplan.Validated
	_ = json.Unmarshal(modelTraces(t, store, wf.ID)[0].Parsed, &parsed)
	if len(parsed.Steps) != 3 || parsed.Truncated != 2 {
		t.Errorf("trace parsed = %+v, want 3 steps kept and 2 truncated", parsed)
	}
	msgs := messages(t, store, wf.ID)
	last := msgs[len(msgs)-1]
	if last.Role != workflow.RoleAssistant || !strings.Contains(last.Text, "limit of 3 steps") {
		t.Errorf("last message = %+v, want the max-steps closing message", last)
	}
}

// A step reads an earlier step's output through docList:<resultLabel>,
// resolved by the shared resolver when it runs.
func TestStepUsesEarlierResultLabel(t *testing.T) {
	t.Parallel()
	store, reg := newStore(), enginetest.NewRegistry()
	model := scripted.New(planJSON(echo("alpha", "draft"), echo("beta", "", "docList:draft")))
	e := startEngine(t, testConfig("a"), store, model, reg)
	wf := wait(t, e, create(t, e, "echo alpha, then echo beta with the draft", 5).ID)
	if wf.Status != workflow.StatusCompleted {
		t.Fatalf("ended %s/%s (%s)", wf.Status, wf.StopReason, wf.Error)
	}
	calls := reg.Calls()
	if len(calls) != 2 || len(calls[1].Documents) != 1 || string(calls[1].Documents[0].Content) != "alpha" {
		t.Fatalf("executions = %+v, want the second to read the first's document", calls)
	}
	msgs := messages(t, store, wf.ID)
	if calls[1].Documents[0].ID != msgs[1].Documents[0].ID {
		t.Errorf("second step read document %s, want %s", calls[1].Documents[0].ID, msgs[1].Documents[0].ID)
	}
	if _, ok := calls[1].Parameters["documentList"]; ok {
		t.Errorf("documentList reached the action's parameters: %v", calls[1].Parameters)
	}
}

// An earlier step that produced no document leaves the label unresolved:
// the later step fails as a step (the shared executor's rule) and, with
// re-planning off, the round goes on with the plan as it was.
func TestUnproducedLabelFailsTheStep(t *testing.T) {
	t.Parallel()
	store, reg := newStore(), enginetest.NewRegistry()
	plan := planJSON(
		step{Action: enginetest.Remote, Parameters: map[string]any{"connectionReference": "crm"}, ResultLabel: "remote_out"},
		echo("beta", "", "docList:remote_out"),
		complete("finished"),
	)
	e := startEngineWith(t, noReplan, testConfig("a"), store, scripted.New(plan), reg)
	wf := wait(t, e, create(t, e, "call and echo", 5).ID)
	msgs := messages(t, store, wf.ID)
	want := []shape{
		{1, 0, workflow.RoleUser, "", ""},
		{1, 1, workflow.RoleAction, enginetest.Remote, workflow.MessageSuccess},
		{1, 2, workflow.RoleAction, enginetest.Echo, workflow.MessageError},
		{1, 3, workflow.RoleAssistant, "", ""},
	}
	if diff := cmp.Diff(want, shapes(msgs)); diff != "" {
		t.Fatalf("messages (-want +got):\n%s", diff)
	}
	if !strings.Contains(msgs[2].Text, "inputs did not resolve") || wf.StopReason != workflow.StopCompleted {
		t.Errorf("failed step text %q, stop reason %s", msgs[2].Text, wf.StopReason)
	}
}

// A new round plans again, seeing the earlier round in its history.
func TestSecondRoundPlansAgain(t *testing.T) {
	t.Parallel()
	store, reg := newStore(), enginetest.NewRegistry()
	model := scripted.New(planJSON(echo("one", "")), planJSON(complete("second answer")))
	e := startEngine(t, testConfig("a"), store, model, reg)
	wf := wait(t, e, create(t, e, "first", 5).ID)
	if _, err := e.StartRound(context.Background(), "alice", wf.ID, engine.NewRound{Prompt: "second"}); err != nil {
		t.Fatalf("StartRound: %v", err)
	}
	wf = wait(t, e, wf.ID)
	if wf.Round != 2 || wf.Status != workflow.StatusCompleted || wf.StopReason != workflow.StopCompleted {
		t.Fatalf("round %d ended %s/%s, want round 2 completed", wf.Round, wf.Status, wf.StopReason)
	}
	calls := model.Calls()
	if len(calls) != 2 || !strings.Contains(calls[1].Text(), "second") || !strings.Contains(calls[1].Text(), "test.echo") {
		t.Errorf("second plan prompt lacks the new prompt or the first round's history")
	}
}

// The seed's SAGE planner ends a plan with {"type": "reply", "text": ...}
// and falls back to a one-reply plan when it has none: either way the
// reply's text is the round's answer, not the engine's plan summary.
func TestSAGEReplyTextIsTheRoundsAnswer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, reply, want string
		actions           int
	}{
		{"tool step then reply", `[{"type":"tool","name":"` + enginetest.Echo + `","arguments":{"text":"alpha"}},{"type":"reply","text":"SAGE-REPLY alpha echoed"}]`,
			"SAGE-REPLY alpha echoed", 1},
		{"fallback plan", `[{"type":"reply","text":"(计划不可用)"}]`, "(计划不可用)", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			store, reg := newStore(), enginetest.NewRegistry()
			e := startEngine(t, testConfig("a"), store, scripted.New(tc.reply), reg)
			wf := wait(t, e, create(t, e, "echo alpha", 5).ID)
			if wf.Status != workflow.StatusCompleted || wf.StopReason != workflow.StopCompleted {
				t.Fatalf("ended %s/%s (%s), want completed/completed", wf.Status, wf.StopReason, wf.Error)
			}
			msgs := messages(t, store, wf.ID)
			last := msgs[len(msgs)-1]
			if last.Role != workflow.RoleAssistant || last.Text != tc.want {
				t.Errorf("last message = %s %q, want the assistant's %q", last.Role, last.Text, tc.want)
			}
			if n := len(reg.Calls()); n != tc.actions {
				t.Errorf("%d executions, want %d", n, tc.actions)
			}
		})
	}
}
