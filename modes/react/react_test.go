package react_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/workflow"
)

const (
	s1 = workflow.StageOne
	s2 = workflow.StageTwo
)

func TestRoundCompletes(t *testing.T) {
	t.Parallel()
	store, reg := newStore(), enginetest.NewRegistry()
	model := scripted.New(replies(enginetest.Echoes("alpha"), enginetest.Echoes("beta"), enginetest.Completes("all done"))...)
	e := startEngine(t, testConfig("a"), store, model, reg)
	wf := wait(t, e, create(t, e, "echo alpha then beta", 5).ID)

	if wf.Status != workflow.StatusCompleted || wf.StopReason != workflow.StopCompleted || wf.Step != 3 {
		t.Errorf("workflow = %s/%s step %d, want completed/completed step 3", wf.Status, wf.StopReason, wf.Step)
	}
	if want := (workflow.Stats{LLMCalls: 6, Actions: 2}); wf.Stats.LLMCalls != want.LLMCalls || wf.Stats.Actions != want.Actions ||
		wf.Stats.PromptTokens == 0 || wf.Stats.CompletionTokens == 0 {
		t.Errorf("stats = %+v, want 6 calls, 2 actions and tokens", wf.Stats)
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
	if got := msgs[3].Text; got != "all done" {
		t.Errorf("assistant text = %q, want the complete message", got)
	}
	if l := msgs[1].DocumentsLabel; l != "round1_step1_test_echo" || len(msgs[1].Documents) != 1 || msgs[1].Summary == "" {
		t.Errorf("first action message: label %q, %d documents, summary %q", l, len(msgs[1].Documents), msgs[1].Summary)
	}
	calls := reg.Calls()
	if len(calls) != 2 || calls[0].IdempotencyKey != wf.ID+":1:1" || calls[1].Parameters["text"] != "beta" {
		t.Errorf("executions = %+v, want echo alpha (key %s:1:1) then echo beta", calls, wf.ID)
	}
	traces, err := store.Traces(context.Background(), wf.ID)
	if err != nil {
		t.Fatal(err)
	}
	var model6 []workflow.Stage
	for _, tr := range traces {
		if tr.Stage == workflow.StageAction {
			continue
		}
		model6 = append(model6, tr.Stage)
		if tr.Template == "" || len(tr.Prompt) == 0 || tr.Response == "" || len(tr.Parsed) == 0 || tr.Model != "scripted" || tr.Error != "" {
			t.Errorf("trace %s of step %d lacks fields: %+v", tr.Stage, tr.Step, tr)
		}
	}
	if diff := cmp.Diff([]workflow.Stage{s1, s2, s1, s2, s1, s2}, model6); diff != "" {
		t.Errorf("model traces (-want +got):\n%s", diff)
	}
}

// A Stage 1 reply carrying parameters is rejected, retried with feedback
// naming the problem, and its values never reach Stage 2 or the action.
func TestStage1ParametersRejected(t *testing.T) {
	t.Parallel()
	var withParams map[string]any
	_ = json.Unmarshal([]byte(enginetest.Select(enginetest.Echo, "echo", nil, "", "text")), &withParams)
	withParams["parameters"] = map[string]any{"text": "SMUGGLED"}
	bad, _ := json.Marshal(withParams)

	store, reg := newStore(), enginetest.NewRegistry()
	model := scripted.New(replies([]string{string(bad)}, enginetest.Echoes("clean"), enginetest.Completes("ok"))...)
	e := startEngine(t, testConfig("a"), store, model, reg)
	wf := wait(t, e, create(t, e, "echo something", 5).ID)
	if wf.Status != workflow.StatusCompleted {
		t.Fatalf("status = %s (%s), want completed", wf.Status, wf.Error)
	}
	calls := model.Calls()
	if diff := cmp.Diff([]workflow.Stage{s1, s1, s2, s1, s2}, stages(calls)); diff != "" {
		t.Fatalf("model calls (-want +got):\n%s", diff)
	}
	if strings.Contains(calls[0].Text(), "Validation feedback") {
		t.Errorf("first Stage 1 prompt already carries feedback")
	}
	retry := calls[1].Text()
	if !strings.Contains(retry, "Validation feedback") || !strings.Contains(retry, "parameters") {
		t.Errorf("retry prompt lacks the feedback about parameters:\n%s", retry)
	}
	for i, c := range calls {
		if c.Stage == s2 && strings.Contains(c.Text(), "SMUGGLED") {
			t.Errorf("call %d (stage 2) saw the rejected Stage 1 parameters", i)
		}
	}
	if ex := reg.Calls(); len(ex) != 1 || ex[0].Parameters["text"] != "clean" {
		t.Errorf("executions = %+v, want one echo with Stage 2's text", ex)
	}
	traces, _ := store.Traces(context.Background(), wf.ID)
	if traces[0].Stage != s1 || traces[0].Attempt != 1 || !strings.Contains(traces[0].Error, "parameters") || traces[1].Attempt != 2 {
		t.Errorf("first traces = %+v / %+v, want the rejection recorded on attempt 1", traces[0], traces[1])
	}
}

// Three rejected Stage 1 replies make one failed action message; the round
// goes on and completes.
func TestStage1RejectedThreeTimesFailsTheStep(t *testing.T) {
	t.Parallel()
	bad := enginetest.Select("no.such", "x", nil, "")
	store, reg := newStore(), enginetest.NewRegistry()
	model := scripted.New(replies([]string{bad, bad, bad}, enginetest.Completes("gave up"))...)
	e := startEngine(t, testConfig("a"), store, model, reg)
	wf := wait(t, e, create(t, e, "do it", 5).ID)
	msgs := messages(t, store, wf.ID)
	want := []shape{
		{1, 0, workflow.RoleUser, "", ""},
		{1, 1, workflow.RoleAction, "", workflow.MessageError},
		{1, 2, workflow.RoleAssistant, "", ""},
	}
	if diff := cmp.Diff(want, shapes(msgs)); diff != "" {
		t.Fatalf("messages (-want +got):\n%s", diff)
	}
	if s := msgs[1].Summary; !strings.Contains(s, "Stage 1 rejected 3 times") || !strings.Contains(s, "no.such") {
		t.Errorf("failed step summary = %q, want the reason", s)
	}
	if wf.Status != workflow.StatusCompleted || len(reg.Calls()) != 0 {
		t.Errorf("status %s, %d executions; want completed and none", wf.Status, len(reg.Calls()))
	}
}

func TestRoundEndings(t *testing.T) {
	t.Parallel()
	// Broken has no parameter to fill: one Stage 1 call, no Stage 2.
	broken := []string{enginetest.Select(enginetest.Broken, "break", nil, "")}
	tests := []struct {
		name      string
		maxSteps  int
		replies   []string
		status    workflow.Status
		reason    workflow.StopReason
		wantCalls int
		wantLast  workflow.Role
		noLoops   bool // loop detection off (engine.Config.LoopRepeats -1)
	}{
		{"max steps soft finish", 2, replies(enginetest.Echoes("a"), enginetest.Echoes("b"), enginetest.Completes("never")),
			workflow.StatusCompleted, workflow.StopMaxSteps, 4, workflow.RoleAssistant, false},
		{"breaker after three failures", 10, replies(broken, broken, broken, enginetest.Completes("never")),
			workflow.StatusFailed, workflow.StopFailures, 3, workflow.RoleAction, false},
		// Four failures in all, never three in a row: had the success at
		// step 3 not reset the count, the third failure (step 4) would
		// trip the breaker.
		// Steps 1, 2, 4 and 5 are the same parameterless call failing the
		// same way, which loop detection would end at step 5 (its third
		// repeat); it is off, so the breaker alone is tested.
		{"a success resets the breaker", 10, replies(broken, broken, enginetest.Echoes("ok"), broken, broken, enginetest.Completes("fine")),
			workflow.StatusCompleted, workflow.StopCompleted, 8, workflow.RoleAssistant, true},
		{"complete on the last allowed step", 2, replies(enginetest.Echoes("a"), enginetest.Completes("just in time")),
			workflow.StatusCompleted, workflow.StopCompleted, 4, workflow.RoleAssistant, false},
		{"model outage", 10, replies(enginetest.Echoes("a"), enginetest.Echoes("b")[:1]),
			workflow.StatusFailed, workflow.StopLLMError, 4, workflow.RoleAction, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			store := newStore()
			model := scripted.New(tc.replies...)
			cfg := testConfig("a")
			if tc.noLoops {
				cfg.LoopRepeats = -1
			}
			e := startEngine(t, cfg, store, model, enginetest.NewRegistry())
			wf := wait(t, e, create(t, e, "go", tc.maxSteps).ID)
			if wf.Status != tc.status || wf.StopReason != tc.reason {
				t.Errorf("ended %s/%s (%q), want %s/%s", wf.Status, wf.StopReason, wf.Error, tc.status, tc.reason)
			}
			if n := len(model.Calls()); n != tc.wantCalls {
				t.Errorf("%d model calls, want %d", n, tc.wantCalls)
			}
			msgs := messages(t, store, wf.ID)
			if last := msgs[len(msgs)-1]; last.Role != tc.wantLast {
				t.Errorf("last message role %s, want %s", last.Role, tc.wantLast)
			}
			if tc.reason == workflow.StopMaxSteps {
				last := msgs[len(msgs)-1]
				if wf.Step != 2 || !strings.Contains(last.Text, "2 steps") || !strings.Contains(last.Text, enginetest.Echo) {
					t.Errorf("closing message (step %d) = %q, want the limit and what was done", wf.Step, last.Text)
				}
				// Like a completed round's answer, the closing message has
				// its own step, after the last action's.
				if prev := msgs[len(msgs)-2]; last.Step != 3 || prev.Step != 2 {
					t.Errorf("closing message at step %d after the action at step %d, want 3 after 2", last.Step, prev.Step)
				}
			}
		})
	}
}

// A Stage 2 reply that breaks the action's schema is retried with the
// validator's "path: message" lines as feedback; only the accepted
// parameters reach the action.
func TestStage2RejectionRetriesWithFeedback(t *testing.T) {
	t.Parallel()
	store, reg := newStore(), enginetest.NewRegistry()
	model := scripted.New(
		enginetest.Select(enginetest.Echo, "echo", nil, "", "text"),
		enginetest.Params(map[string]any{"text": "x", "colour": "red"}),
		`{"schema": "parameters_v2", "parameters": {"text": "y"}}`,
		enginetest.Params(map[string]any{"text": "accepted"}),
		enginetest.Completes("ok")[0], enginetest.Completes("ok")[1],
	)
	e := startEngine(t, testConfig("a"), store, model, reg)
	wf := wait(t, e, create(t, e, "echo", 5).ID)
	if wf.Status != workflow.StatusCompleted {
		t.Fatalf("ended %s (%s)", wf.Status, wf.Error)
	}
	calls := model.Calls()
	if diff := cmp.Diff([]workflow.Stage{s1, s2, s2, s2, s1, s2}, stages(calls)); diff != "" {
		t.Fatalf("model calls (-want +got):\n%s", diff)
	}
	if p := calls[2].Text(); !strings.Contains(p, "/colour") || !strings.Contains(p, "Validation feedback") {
		t.Errorf("first Stage 2 retry lacks the schema feedback:\n%s", p)
	}
	if p := calls[3].Text(); !strings.Contains(p, "parameters_v2") && !strings.Contains(p, "parameters_v1") {
		t.Errorf("second Stage 2 retry does not mention the schema value:\n%s", p)
	}
	if ex := reg.Calls(); len(ex) != 1 || ex[0].Parameters["text"] != "accepted" || len(ex[0].Parameters) != 1 {
		t.Errorf("executions = %+v, want only the accepted parameters", ex)
	}
}

// A registered field Stage 1 did not ask for (Echo's optional "message")
// is a rejection with feedback naming the fields to fill, never executed.
func TestStage2UnaskedFieldRejected(t *testing.T) {
	t.Parallel()
	store, reg := newStore(), enginetest.NewRegistry()
	model := scripted.New(
		enginetest.Select(enginetest.Echo, "echo", nil, "", "text"),
		enginetest.Params(map[string]any{"text": "x", "message": "sneaked in"}),
		enginetest.Params(map[string]any{"text": "accepted"}),
		enginetest.Completes("ok")[0], enginetest.Completes("ok")[1],
	)
	e := startEngine(t, testConfig("a"), store, model, reg)
	wf := wait(t, e, create(t, e, "echo", 5).ID)
	if wf.Status != workflow.StatusCompleted {
		t.Fatalf("ended %s (%s)", wf.Status, wf.Error)
	}
	calls := model.Calls()
	if diff := cmp.Diff([]workflow.Stage{s1, s2, s2, s1, s2}, stages(calls)); diff != "" {
		t.Fatalf("model calls (-want +got):\n%s", diff)
	}
	if p := calls[2].Text(); !strings.Contains(p, "parameters.message: not a field to fill: give only the fields text") {
		t.Errorf("Stage 2 retry lacks the unasked-field feedback:\n%s", p)
	}
	if ex := reg.Calls(); len(ex) != 1 || ex[0].Parameters["text"] != "accepted" || len(ex[0].Parameters) != 1 {
		t.Errorf("executions = %+v, want only the accepted parameters", ex)
	}
}

// After the breaker, Resume resets the count and continues with the next
// step; the failed steps stay recorded.
func TestResumeAfterBreaker(t *testing.T) {
	t.Parallel()
	// Broken has no parameter to fill: one Stage 1 call, no Stage 2.
	broken := []string{enginetest.Select(enginetest.Broken, "break", nil, "")}
	store := newStore()
	model := scripted.New(replies(broken, broken, broken, enginetest.Completes("recovered"))...)
	e := startEngine(t, testConfig("a"), store, model, enginetest.NewRegistry())
	wf := wait(t, e, create(t, e, "go", 10).ID)
	if wf.StopReason != workflow.StopFailures || wf.Step != 3 || !strings.Contains(wf.Error, "3 steps failed") {
		t.Fatalf("ended %s/%s at step %d (%q), want failures at step 3", wf.Status, wf.StopReason, wf.Step, wf.Error)
	}
	if _, err := e.Resume(context.Background(), "alice", wf.ID); err != nil {
		t.Fatal(err)
	}
	got := wait(t, e, wf.ID)
	if got.Status != workflow.StatusCompleted || got.Step != 4 {
		t.Fatalf("after resume %s/%s at step %d, want completed at step 4", got.Status, got.StopReason, got.Step)
	}
	want := []shape{
		{1, 0, workflow.RoleUser, "", ""},
		{1, 1, workflow.RoleAction, enginetest.Broken, workflow.MessageError},
		{1, 2, workflow.RoleAction, enginetest.Broken, workflow.MessageError},
		{1, 3, workflow.RoleAction, enginetest.Broken, workflow.MessageError},
		{1, 4, workflow.RoleAssistant, "", ""},
	}
	if diff := cmp.Diff(want, shapes(messages(t, store, wf.ID))); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}

// An action that panics is a failed step, not a crashed round.
func TestPanickingActionIsAFailedStep(t *testing.T) {
	t.Parallel()
	store, reg := newStore(), enginetest.NewRegistry()
	reg.ExecuteFunc = func(context.Context, workflow.ActionCall) (workflow.ActionResult, error) { panic("boom") }
	model := scripted.New(replies(enginetest.Echoes("a"), enginetest.Completes("done"))...)
	e := startEngine(t, testConfig("a"), store, model, reg)
	wf := wait(t, e, create(t, e, "echo", 5).ID)
	msgs := messages(t, store, wf.ID)
	if wf.Status != workflow.StatusCompleted || len(msgs) != 3 || msgs[1].Status != workflow.MessageError {
		t.Fatalf("ended %s with %+v, want a failed step then completion", wf.Status, shapes(msgs))
	}
	if strings.Contains(msgs[1].Text, "boom") {
		t.Errorf("the panic value leaked into the message: %q", msgs[1].Text)
	}
}

// A rejected attempt is persisted with its feedback before the retry, so a
// round stopped during the retry resumes with that retry — attempt 2, the
// same feedback — instead of starting Stage 1 over.
func TestRejectedAttemptSurvivesStopAndResume(t *testing.T) {
	t.Parallel()
	store, reg := newStore(), enginetest.NewRegistry()
	bad := enginetest.Select("no.such", "guess", nil, "")
	m, model, entered, _ := blockAt(1, replies([]string{bad}, enginetest.Echoes("a"), enginetest.Completes("done")))
	e := startEngine(t, testConfig("a"), store, m, reg)
	wf := create(t, e, "echo", 5)
	<-entered
	mid, err := store.GetWorkflow(context.Background(), wf.ID)
	if err != nil {
		t.Fatal(err)
	}
	if cp := mid.Checkpoint; cp == nil || cp.Phase != workflow.PhaseSelect || cp.Attempt != 1 ||
		len(cp.Feedback) == 0 || !strings.Contains(strings.Join(cp.Feedback, " "), "no.such") || mid.Stats.LLMCalls != 1 {
		t.Fatalf("during the retry: checkpoint %+v, %d calls; want select, attempt 1, the feedback, 1 call", cp, mid.Stats.LLMCalls)
	}
	if _, err := e.Stop(context.Background(), "alice", wf.ID); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if _, err := e.Resume(context.Background(), "alice", wf.ID); err != nil {
		t.Fatalf("Resume: %v", err)
	}
	if got := wait(t, e, wf.ID); got.Status != workflow.StatusCompleted {
		t.Fatalf("after resume %s/%s (%s), want completed", got.Status, got.StopReason, got.Error)
	}
	calls := model.Calls()
	if diff := cmp.Diff([]workflow.Stage{s1, s1, s1, s2, s1, s2}, stages(calls)); diff != "" {
		t.Fatalf("model calls (-want +got):\n%s", diff)
	}
	if p := calls[2].Text(); !strings.Contains(p, "Validation feedback") || !strings.Contains(p, "no.such") {
		t.Errorf("the resumed retry lacks the feedback:\n%s", p)
	}
	var attempts []int
	traces, _ := store.Traces(context.Background(), wf.ID)
	for _, tr := range traces {
		if tr.Stage == s1 {
			attempts = append(attempts, tr.Attempt)
		}
	}
	if diff := cmp.Diff([]int{1, 2, 2, 1}, attempts); diff != "" {
		t.Errorf("Stage 1 trace attempts (-want +got):\n%s", diff)
	}
}

// The Stage 1 prompt the mode sends (AVAILABLE_METHODS from its cache) is
// exactly what prompts.Builder.Stage1 renders from the same state, so the
// admin render route and the traces agree — also after the registry
// changes an action's schema between rounds.
func TestStage1PromptMatchesTheBuilder(t *testing.T) {
	t.Parallel()
	store, reg := newStore(), enginetest.NewRegistry()
	model := scripted.New(replies(enginetest.Completes("one"), enginetest.Completes("two"))...)
	e := startEngine(t, testConfig("a"), store, model, reg)
	wf := wait(t, e, create(t, e, "answer", 5).ID)
	offered := [][]workflow.ActionSpec{reg.Actions()}
	for i, s := range reg.Specs { // a reloaded registry: same name, new schema
		if s.Name == enginetest.Broken {
			reg.Specs[i].Parameters = json.RawMessage(`{"type":"object","required":["why"],"properties":{"why":{"type":"string"}}}`)
		}
	}
	if _, err := e.StartRound(context.Background(), "alice", wf.ID, engine.NewRound{Prompt: "again"}); err != nil {
		t.Fatalf("StartRound: %v", err)
	}
	wf = wait(t, e, wf.ID)
	offered = append(offered, reg.Actions())
	msgs := messages(t, store, wf.ID)
	calls := model.Calls()
	bld := newBuilder(t)
	for i, round := range []int{1, 2} {
		var seen []workflow.Message
		for _, m := range msgs {
			if m.Round < round || m.Role == workflow.RoleUser && m.Round == round {
				seen = append(seen, m)
			}
		}
		want, err := bld.Stage1(prompts.Stage1Input{
			Workflow: &workflow.Workflow{ID: wf.ID, Round: round}, Messages: seen,
			Actions: offered[i], Connections: reg.Connections("alice"),
		})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want.Messages, calls[2*i].Messages); diff != "" {
			t.Errorf("round %d: Stage 1 prompt differs from the builder's (-builder +sent):\n%s", round, diff)
		}
	}
	if p := calls[2].Text(); !strings.Contains(p, "why (required, string)") {
		t.Errorf("round 2's Stage 1 prompt does not show the changed schema:\n%s", p)
	}
}
