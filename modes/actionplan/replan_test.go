package actionplan_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/modes/actionplan"
	"github.com/twostep/twostep/workflow"
)

// ids matches the generated ids a prompt quotes, so a golden file of a
// prompt rendered by a running engine stays stable.
var ids = regexp.MustCompile(`\b(wf|msg|doc)_[0-9A-Za-z]+`)

func stableIDs(s string) string { return ids.ReplaceAllString(s, "${1}_ID") }

// A failed step earns one re-planning call, which sees the plan so far and
// the failure (golden); its plan replaces the steps not run yet and runs.
func TestReplanAfterFailedStep(t *testing.T) {
	t.Parallel()
	store, reg := newStore(), enginetest.NewRegistry()
	model := scripted.New(
		planJSON(echo("alpha", "first"), step{Action: enginetest.Broken}, echo("old plan", "")),
		planJSON(echo("new plan", "fixed", "docList:first"), complete("done after re-planning")),
	)
	e := startEngine(t, testConfig("a"), store, model, reg)
	wf := wait(t, e, create(t, e, "echo alpha, then break, then echo", 8).ID)

	if wf.Status != workflow.StatusCompleted || wf.StopReason != workflow.StopCompleted || wf.Stats.LLMCalls != 2 {
		t.Fatalf("ended %s/%s with %d model calls (%s), want completed with 2", wf.Status, wf.StopReason, wf.Stats.LLMCalls, wf.Error)
	}
	msgs := messages(t, store, wf.ID)
	want := []shape{
		{1, 0, workflow.RoleUser, "", ""},
		{1, 1, workflow.RoleAction, enginetest.Echo, workflow.MessageSuccess},
		{1, 2, workflow.RoleAction, enginetest.Broken, workflow.MessageError},
		{1, 3, workflow.RoleAction, enginetest.Echo, workflow.MessageSuccess},
		{1, 4, workflow.RoleAssistant, "", ""},
	}
	if diff := cmp.Diff(want, shapes(msgs)); diff != "" {
		t.Fatalf("messages (-want +got):\n%s", diff)
	}
	if msgs[3].Text != "new plan" || msgs[3].DocumentsLabel != "fixed" || msgs[4].Text != "done after re-planning" {
		t.Errorf("after re-planning: step 3 %q (%s), answer %q", msgs[3].Text, msgs[3].DocumentsLabel, msgs[4].Text)
	}
	for _, c := range reg.Calls() {
		if c.Parameters["text"] == "old plan" {
			t.Error("a step the re-planning replaced still ran")
		}
	}
	calls := model.Calls()
	if diff := cmp.Diff([]workflow.Stage{stPlan, stPlan}, stages(calls)); diff != "" {
		t.Fatalf("model calls (-want +got):\n%s", diff)
	}
	replan := calls[1].Text()
	if !strings.Contains(replan, "test.broken failed on purpose") {
		t.Errorf("the re-planning prompt does not carry the failure:\n%s", replan)
	}
	var b strings.Builder
	for _, m := range calls[1].Messages {
		b.WriteString("--- " + m.Role + " ---\n" + m.Content + "\n")
	}
	golden(t, "replan_prompt.golden", stableIDs(b.String()))
	var tmpl []string
	for _, tr := range modelTraces(t, store, wf.ID) {
		tmpl = append(tmpl, tr.Template)
	}
	if diff := cmp.Diff([]string{"plan", "replan"}, tmpl); diff != "" {
		t.Errorf("trace templates (-want +got):\n%s", diff)
	}
}

// At most MaxReplans re-planning calls per round (default 2): the third
// failure leaves the rest of the plan as it is. Successes in between keep
// the failure breaker away.
func TestReplanLimitPerRound(t *testing.T) {
	t.Parallel()
	broken := step{Action: enginetest.Broken}
	tests := []struct {
		name    string
		opts    actionplan.Options
		replies []string
		want    []string // actions run, in order
	}{
		{"default limit 2", actionplan.Options{}, []string{
			planJSON(broken),
			planJSON(echo("x", ""), broken),
			planJSON(echo("y", ""), broken),
		}, []string{enginetest.Broken, enginetest.Echo, enginetest.Broken, enginetest.Echo, enginetest.Broken}},
		{"limit 1", actionplan.Options{MaxReplans: 1}, []string{
			planJSON(broken, echo("a", "")),
			planJSON(broken, echo("b", "")),
		}, []string{enginetest.Broken, enginetest.Broken, enginetest.Echo}},
		{"off", noReplan, []string{
			planJSON(broken, echo("a", "")),
		}, []string{enginetest.Broken, enginetest.Echo}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			store, reg := newStore(), enginetest.NewRegistry()
			model := scripted.New(tc.replies...) // one more call would fail the round
			e := startEngineWith(t, tc.opts, testConfig("a"), store, model, reg)
			wf := wait(t, e, create(t, e, "keep trying", 10).ID)
			if wf.Status != workflow.StatusCompleted || wf.StopReason != workflow.StopCompleted {
				t.Fatalf("ended %s/%s (%s), want completed", wf.Status, wf.StopReason, wf.Error)
			}
			if n := len(model.Calls()); n != len(tc.replies) || wf.Stats.LLMCalls != n {
				t.Errorf("%d model calls (stats %d), want %d", n, wf.Stats.LLMCalls, len(tc.replies))
			}
			var ran []string
			for _, c := range reg.Calls() {
				ran = append(ran, c.Action)
			}
			if diff := cmp.Diff(tc.want, ran); diff != "" {
				t.Errorf("actions run (-want +got):\n%s", diff)
			}
		})
	}
}

// A re-planning reply with no usable plan keeps the remaining steps; an
// empty plan ends the round after the steps run.
func TestReplanWithoutUsablePlan(t *testing.T) {
	t.Parallel()
	broken := step{Action: enginetest.Broken}
	tests := []struct {
		name, reply string
		want        []string
	}{
		{"prose", "I cannot plan any further.", []string{enginetest.Broken, enginetest.Echo}},
		{"every step invalid", planJSON(step{Action: "no.such"}), []string{enginetest.Broken, enginetest.Echo}},
		{"empty plan", "[]", []string{enginetest.Broken}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			store, reg := newStore(), enginetest.NewRegistry()
			model := scripted.New(planJSON(broken, echo("kept", "")), tc.reply)
			e := startEngine(t, testConfig("a"), store, model, reg)
			wf := wait(t, e, create(t, e, "try", 5).ID)
			if wf.Status != workflow.StatusCompleted || wf.StopReason != workflow.StopCompleted {
				t.Fatalf("ended %s/%s (%s), want completed", wf.Status, wf.StopReason, wf.Error)
			}
			var ran []string
			for _, c := range reg.Calls() {
				ran = append(ran, c.Action)
			}
			if diff := cmp.Diff(tc.want, ran); diff != "" {
				t.Errorf("actions run (-want +got):\n%s", diff)
			}
		})
	}
}

// An instance crashing right after the re-planning call was saved loses
// nothing: another instance runs the new plan without a new call and
// without running the failed step again.
func TestCrashAfterReplanResumesWithoutRepeating(t *testing.T) {
	t.Parallel()
	mem := newStore()
	// Commits: the plan, step 1 (failed), the new plan.
	dying := enginetest.NewDyingStore(mem, 3)
	reg := enginetest.NewRegistry()
	first := scripted.New(
		planJSON(step{Action: enginetest.Broken}, echo("old", "")),
		planJSON(echo("new", ""), complete("recovered")),
	)
	e1 := startEngine(t, enginetest.TakeoverConfig("one"), dying, first, reg)
	wf := create(t, e1, "break, then echo", 5)
	select {
	case <-dying.Died():
	case <-time.After(10 * time.Second):
		t.Fatal("instance one never reached its crash point")
	}
	mid, err := mem.GetWorkflow(context.Background(), wf.ID)
	if err != nil {
		t.Fatal(err)
	}
	if cp, st := mid.Checkpoint, planOf(t, mid.Checkpoint); cp == nil || cp.Phase != workflow.PhaseExecute || st.Replans != 1 || st.PlanIndex != 1 || len(st.Plan) != 3 {
		t.Fatalf("saved checkpoint = %+v, want the re-planned plan (3 steps, index 1, 1 re-plan)", mid.Checkpoint)
	}
	second := scripted.New() // any model call fails the round
	e2 := startEngine(t, testConfig("two"), mem, second, reg)
	got := wait(t, e2, wf.ID)
	if got.Status != workflow.StatusCompleted || got.StopReason != workflow.StopCompleted {
		t.Fatalf("ended %s/%s (%s), want completed", got.Status, got.StopReason, got.Error)
	}
	if n := len(first.Calls()) + len(second.Calls()); n != 2 || got.Stats.LLMCalls != 2 {
		t.Errorf("%d model calls (stats %d), want the plan and the re-plan only", n, got.Stats.LLMCalls)
	}
	// Instance one may have run step 2 before its commit failed; the
	// takeover runs it again under the same idempotency key.
	ran := map[string]string{}
	for _, c := range reg.Calls() {
		if prev, ok := ran[c.IdempotencyKey]; ok && prev != c.Action {
			t.Errorf("step %s ran %s and %s", c.IdempotencyKey, prev, c.Action)
		}
		ran[c.IdempotencyKey] = c.Action
	}
	want := map[string]string{wf.ID + ":1:1": enginetest.Broken, wf.ID + ":1:2": enginetest.Echo}
	if diff := cmp.Diff(want, ran); diff != "" {
		t.Errorf("actions run by step (-want +got):\n%s", diff)
	}
	msgs := messages(t, mem, wf.ID)
	if last := msgs[len(msgs)-1]; last.Role != workflow.RoleAssistant || last.Text != "recovered" {
		t.Errorf("last message = %s %q, want the re-planned answer", last.Role, last.Text)
	}
}

// SAGE's step shape runs end to end: tool steps (arguments as an object or
// as a JSON string) and a reply step, which is the round's answer.
func TestSAGEShapedPlanRuns(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"content", "message"} {
		t.Run(key, func(t *testing.T) {
			t.Parallel()
			plan := `{"steps": [
  {"type": "tool", "name": "test.echo", "arguments": {"text": "alpha"}, "resultLabel": "a"},
  {"type": "tool", "name": "test.echo", "arguments": "{\"text\": \"beta\", \"documentList\": [\"docList:a\"]}"},
  {"type": "reply", "` + key + `": "Both echoed."}
]}`
			store, reg := newStore(), enginetest.NewRegistry()
			model := scripted.New(plan)
			e := startEngine(t, testConfig("a"), store, model, reg)
			wf := wait(t, e, create(t, e, "echo alpha and beta", 5).ID)
			if wf.Status != workflow.StatusCompleted || wf.StopReason != workflow.StopCompleted || wf.Stats.Actions != 2 {
				t.Fatalf("ended %s/%s with %d actions (%s), want completed with 2", wf.Status, wf.StopReason, wf.Stats.Actions, wf.Error)
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
			calls := reg.Calls()
			if calls[1].Parameters["text"] != "beta" || len(calls[1].Documents) != 1 || msgs[3].Text != "Both echoed." {
				t.Errorf("second call %+v with %d documents; answer %q", calls[1].Parameters, len(calls[1].Documents), msgs[3].Text)
			}
		})
	}
}

// Plan steps are validated against the offered top-K subset: a registered
// action the prompt did not offer is dropped with a reason in the trace.
func TestPlanStepsLimitedToOfferedActions(t *testing.T) {
	t.Parallel()
	store, reg := newStore(), enginetest.NewRegistry()
	plan := planJSON(
		step{Action: enginetest.Remote, Parameters: map[string]any{"connectionReference": "crm"}},
		echo("alpha", ""),
	)
	model := scripted.New(plan)
	e := startEngineWith(t, actionplan.Options{TopK: 1}, testConfig("a"), store, model, reg)
	wf := wait(t, e, create(t, e, "echo alpha", 5).ID)
	if wf.StopReason != workflow.StopCompleted || wf.Stats.Actions != 1 {
		t.Fatalf("ended %s with %d actions, want completed with 1", wf.StopReason, wf.Stats.Actions)
	}
	if calls := reg.Calls(); len(calls) != 1 || calls[0].Action != enginetest.Echo {
		t.Errorf("actions run = %+v, want echo only", calls)
	}
	tr := modelTraces(t, store, wf.ID)[0]
	if !strings.Contains(tr.Error, `step 1 (test.remote) dropped: action "test.remote" is not among the available methods offered`) {
		t.Errorf("plan trace error = %q", tr.Error)
	}
}

// Loop detection holds in the action-plan mode too: a plan repeating the
// same call with the same result ends with stop reason loop at the third
// repeat, before the rest of the plan runs.
func TestPlanLoopEndsTheRound(t *testing.T) {
	t.Parallel()
	store, reg := newStore(), enginetest.NewRegistry()
	same := echo("same", "")
	model := scripted.New(planJSON(same, same, same, same, same, complete("never reached")))
	e := startEngine(t, testConfig("a"), store, model, reg)
	wf := wait(t, e, create(t, e, "echo the same thing", 10).ID)
	if wf.Status != workflow.StatusCompleted || wf.StopReason != workflow.StopLoop {
		t.Fatalf("ended %s/%s (%s), want completed/loop", wf.Status, wf.StopReason, wf.Error)
	}
	if n := len(reg.Calls()); n != 4 {
		t.Errorf("echo ran %d times, want 4 (the original and three repeats)", n)
	}
	msgs := messages(t, store, wf.ID)
	if last := msgs[len(msgs)-1]; last.Role != workflow.RoleAssistant || !strings.Contains(last.Text, "going in circles") {
		t.Errorf("closing message = %s %q", last.Role, last.Text)
	}
}
