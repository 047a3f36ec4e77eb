package react_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/twostep/twostep/approval"
	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/workflow"
)

// echoIntent holds Echo for an intent approval; constraints are judged by
// approval.Policy, whose constraint methods need no registry.
type echoIntent struct{ checker *approval.Policy }

func (echoIntent) NeedsApproval(action string, _ map[string]any) (bool, workflow.Effect) {
	return action == enginetest.Echo, workflow.EffectWrite
}
func (echoIntent) NeedsIntentApproval(action string) bool { return action == enginetest.Echo }
func (p echoIntent) ConstraintFragmentProblems(c map[string]any) []string {
	return p.checker.ConstraintFragmentProblems(c)
}
func (p echoIntent) ConstraintProblems(c, params map[string]any) []string {
	return p.checker.ConstraintProblems(c, params)
}

func intentConfig() engine.Config {
	cfg := testConfig("a")
	cfg.Approvals = echoIntent{checker: &approval.Policy{}}
	return cfg
}

// intentPaused starts a workflow whose Stage 1 picks Echo and waits for
// its intent pause, checking it holds no parameters and that neither
// Stage 2 nor the action ran.
func intentPaused(t *testing.T, e *enginetest.Engine, store workflow.Store, reg *enginetest.Registry, prompt string) *workflow.Workflow {
	t.Helper()
	before := len(reg.Calls())
	wf := wait(t, e, create(t, e, prompt, 5).ID)
	p := wf.PendingApproval
	if wf.Status != workflow.StatusAwaitingApproval || p == nil || p.Kind != workflow.ApprovalIntent || p.Parameters != nil ||
		len(p.Fields) != 1 || p.Fields[0].Name != "text" || p.Action != enginetest.Echo {
		t.Fatalf("round = %s, pending %+v; want an intent approval of echo with no parameters", wf.Status, p)
	}
	traces, err := store.Traces(context.Background(), wf.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range traces {
		if tr.Stage == workflow.StageTwo {
			t.Errorf("Stage 2 ran before the intent was approved: %+v", tr)
		}
	}
	if n := len(reg.Calls()) - before; n != 0 {
		t.Fatalf("the held action ran %d times before any decision", n)
	}
	return wf
}

// TestIntentApprovalConstrainsStage2: decisions whose constraints do not
// compile, name a field Stage 2 does not fill, or edit parameters that do
// not exist yet are refused and the intent stays pending; approved with
// {text: {enum: [hi]}}, Stage 2 is shown the narrowed schema, its reply
// "hello" is rejected naming the constraint, "hi" runs once, and the step
// does not pause again — the grant survives the Stage 2 retry.
func TestIntentApprovalConstrainsStage2(t *testing.T) {
	t.Parallel()
	for name, newStore := range approvalStores(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			store, reg := newStore(t), enginetest.NewRegistry()
			model := scripted.New(replies(
				[]string{enginetest.Select(enginetest.Echo, "echo a greeting", nil, "", "text")},
				[]string{enginetest.Params(map[string]any{"text": "hello"}), enginetest.Params(map[string]any{"text": "hi"})},
				enginetest.Completes("done"))...)
			e := startEngine(t, intentConfig(), store, model, reg)
			wf := intentPaused(t, e, store, reg, "greet")
			ctx, id := context.Background(), wf.PendingApproval.ID
			for _, bad := range []workflow.Decision{
				{Approve: true, Constraints: map[string]any{"other": map[string]any{"const": 1}}},
				{Approve: true, Constraints: map[string]any{"text": "hi"}},
				{Approve: true, Constraints: map[string]any{"text": map[string]any{"pattern": "("}}},
				{Approve: true, Parameters: map[string]any{"text": "hi"}},
				{Approve: true, Remember: &workflow.Remember{Scope: "team"}},
				{Constraints: map[string]any{"text": map[string]any{"enum": []any{"hi"}}}},
			} {
				if _, err := e.Decide(ctx, "alice", wf.ID, id, bad); workflow.KindOf(err) != workflow.KindInvalid {
					t.Errorf("decision %+v = %v, want invalid", bad, err)
				}
			}
			var pp *engine.ParameterProblems
			_, err := e.Decide(ctx, "alice", wf.ID, id, workflow.Decision{Approve: true, Constraints: map[string]any{"other": map[string]any{}}})
			if !errors.As(err, &pp) || pp.Body != "constraints" || len(pp.Lines) != 1 || !strings.HasPrefix(pp.Lines[0], "other: ") {
				t.Errorf("a constraint on another field = %v, want one constraints line naming it", err)
			}
			if still, _ := e.Get(ctx, "alice", wf.ID); still.PendingApproval == nil || still.PendingApproval.ID != id {
				t.Fatalf("after refused decisions the intent is no longer pending: %+v", still)
			}
			if _, err := e.Decide(ctx, "alice", wf.ID, id, workflow.Decision{Approve: true,
				Constraints: map[string]any{"text": map[string]any{"enum": []any{"hi"}}}}); err != nil {
				t.Fatal(err)
			}
			if done := wait(t, e, wf.ID); done.Status != workflow.StatusCompleted {
				t.Fatalf("round ended %s (%s), want completed without a second pause", done.Status, done.Error)
			}
			if calls := reg.Calls(); len(calls) != 1 || calls[0].Parameters["text"] != "hi" {
				t.Errorf("executions = %+v, want one echo hi", calls)
			}
			traces, _ := store.Traces(ctx, wf.ID)
			var stage2 []workflow.Trace
			for _, tr := range traces {
				if tr.Stage == workflow.StageTwo && tr.Step == 1 {
					stage2 = append(stage2, tr)
				}
			}
			if len(stage2) != 2 || !strings.Contains(stage2[0].Error, "approved constraint") || stage2[1].Error != "" {
				t.Fatalf("Stage 2 traces of step 1 = %+v, want a rejected one naming the constraint, then an accepted one", stage2)
			}
			var prompt strings.Builder
			for _, m := range stage2[0].Prompt {
				prompt.WriteString(m.Content)
			}
			if !strings.Contains(prompt.String(), `"enum"`) || !strings.Contains(prompt.String(), `"hi"`) {
				t.Errorf("the Stage 2 prompt does not show the narrowed schema:\n%s", prompt.String())
			}
		})
	}
}

// TestStandingIntentOfScopeUser: an intent approved with remember {scope:
// user} lets the user's next workflow run a call within its constraints
// without a pause (approvedBy on its message, one use counted) and pauses
// one outside them as a call; once revoked, the next workflow pauses for
// the intent; deleting a workflow drops its workflow-scoped ones.
func TestStandingIntentOfScopeUser(t *testing.T) {
	t.Parallel()
	store, reg := memstore.New(), enginetest.NewRegistry()
	model := scripted.New(replies(
		[]string{enginetest.Select(enginetest.Echo, "echo a greeting", nil, "", "text")},
		[]string{enginetest.Params(map[string]any{"text": "hi"})}, enginetest.Completes("one"),
		enginetest.Echoes("hi"), enginetest.Completes("two"),
		enginetest.Echoes("bye"),
		[]string{enginetest.Select(enginetest.Echo, "echo again", nil, "", "text")},
		[]string{enginetest.Select(enginetest.Echo, "echo once more", nil, "", "text")},
	)...)
	e := startEngine(t, intentConfig(), store, model, reg)
	ctx := context.Background()
	first := intentPaused(t, e, store, reg, "first")
	if _, err := e.Decide(ctx, "alice", first.ID, first.PendingApproval.ID, workflow.Decision{Approve: true,
		Constraints: map[string]any{"text": map[string]any{"enum": []any{"hi"}}}, Remember: &workflow.Remember{Scope: workflow.ScopeUser}}); err != nil {
		t.Fatal(err)
	}
	wait(t, e, first.ID)
	second := wait(t, e, create(t, e, "second", 5).ID)
	if second.Status != workflow.StatusCompleted {
		t.Fatalf("second workflow = %s (%+v), want completed without a pause", second.Status, second.PendingApproval)
	}
	list, err := e.Standing(ctx, "alice")
	if err != nil || len(list) != 1 || list[0].Uses != 1 || list[0].GrantedBy != "alice" || list[0].Scope != workflow.ScopeUser {
		t.Fatalf("standing = %+v, %v; want one of scope user used once", list, err)
	}
	msgs := messages(t, store, second.ID)
	if a := msgs[1].ApprovedBy; a == nil || a.StandingApprovalID != list[0].ID || a.GrantedBy != "alice" {
		t.Errorf("the admitted call's message = %+v, want approvedBy %s by alice", msgs[1], list[0].ID)
	}
	if others, _ := e.Standing(ctx, "bob"); len(others) != 0 {
		t.Errorf("bob sees %+v", others)
	}
	third := wait(t, e, create(t, e, "third", 5).ID)
	if p := third.PendingApproval; p == nil || p.Kind != workflow.ApprovalCall || p.Parameters["text"] != "bye" {
		t.Fatalf("third workflow = %s, pending %+v; want a call approval of echo bye", third.Status, p)
	}
	if err := e.RevokeStanding(ctx, "bob", list[0].ID); workflow.KindOf(err) != workflow.KindNotFound {
		t.Errorf("bob's revocation = %v, want not found", err)
	}
	if err := e.RevokeStanding(ctx, "alice", list[0].ID); err != nil {
		t.Fatal(err)
	}
	fourth := intentPaused(t, e, store, reg, "fourth")
	if _, err := e.Decide(ctx, "alice", fourth.ID, fourth.PendingApproval.ID, workflow.Decision{Approve: true,
		Remember: &workflow.Remember{Scope: workflow.ScopeWorkflow}}); err != nil {
		t.Fatal(err)
	}
	if list, _ := e.Standing(ctx, "alice"); len(list) != 1 || list[0].WorkflowID != fourth.ID || len(list[0].Constraints) != 0 {
		t.Fatalf("standing = %+v, want one of scope workflow %s with no constraint", list, fourth.ID)
	}
	if err := e.Delete(ctx, "alice", fourth.ID); err != nil {
		t.Fatal(err)
	}
	if list, _ := e.Standing(ctx, "alice"); len(list) != 0 {
		t.Errorf("after deleting its workflow, standing = %+v, want none", list)
	}
}

// TestStandingCallRepeatsParameters: a call approval remembered for the
// user admits a later call with equal parameters, not another one; a
// decision that does not apply (a stale approval id) keeps nothing.
func TestStandingCallRepeatsParameters(t *testing.T) {
	t.Parallel()
	store, reg := memstore.New(), enginetest.NewRegistry()
	model := scripted.New(replies(enginetest.Echoes("hello"), enginetest.Completes("one"),
		enginetest.Echoes("hello"), enginetest.Completes("two"), enginetest.Echoes("other"))...)
	e := startEngine(t, approvalConfig(), store, model, reg)
	ctx := context.Background()
	first := wait(t, e, create(t, e, "first", 5).ID)
	if _, err := e.Decide(ctx, "alice", first.ID, "apr_stale", workflow.Decision{Approve: true,
		Remember: &workflow.Remember{Scope: workflow.ScopeUser}}); workflow.KindOf(err) != workflow.KindConflict {
		t.Fatalf("a stale decision = %v, want conflict", err)
	}
	if list, _ := e.Standing(ctx, "alice"); len(list) != 0 {
		t.Fatalf("a refused decision kept %+v", list)
	}
	if _, err := e.Decide(ctx, "alice", first.ID, first.PendingApproval.ID, workflow.Decision{Approve: true,
		Remember: &workflow.Remember{Scope: workflow.ScopeUser}}); err != nil {
		t.Fatal(err)
	}
	wait(t, e, first.ID)
	if second := wait(t, e, create(t, e, "second", 5).ID); second.Status != workflow.StatusCompleted {
		t.Fatalf("second workflow = %s, want completed: the same call was approved", second.Status)
	}
	third := wait(t, e, create(t, e, "third", 5).ID)
	if p := third.PendingApproval; p == nil || p.Kind != workflow.ApprovalCall || p.Parameters["text"] != "other" {
		t.Fatalf("third workflow = %s, pending %+v; want a call approval of echo other", third.Status, p)
	}
	if list, _ := e.Standing(ctx, "alice"); len(list) != 1 || list[0].Kind != workflow.ApprovalCall || list[0].Uses != 1 ||
		list[0].Parameters["text"] != "hello" {
		t.Errorf("standing = %+v, want one call approval of echo hello used once", list)
	}
}

// TestNarrowedStage2NativeSchema: the native output schema Stage 2 sends a
// provider is built from the narrowed spec, so it carries the constraint.
func TestNarrowedStage2NativeSchema(t *testing.T) {
	t.Parallel()
	spec := workflow.ActionSpec{Name: "tickets.create", Parameters: json.RawMessage(
		`{"type":"object","required":["priority"],"properties":{"priority":{"type":"integer","minimum":1,"maximum":5}}}`)}
	asked := []workflow.FieldSpec{{Name: "priority", Type: "number", Required: true}}
	plain, err := prompts.NewStage2Output(spec, asked)
	if err != nil {
		t.Fatal(err)
	}
	narrowed, err := prompts.NewStage2Output(workflow.NarrowSpec(spec, map[string]any{"priority": map[string]any{"maximum": 2}}), asked)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(plain.Output.Schema), `"maximum":5`) || !strings.Contains(string(narrowed.Output.Schema), `"maximum":2`) ||
		strings.Contains(string(narrowed.Output.Schema), `"maximum":5`) {
		t.Errorf("native schemas:\nplain    %s\nnarrowed %s\nwant maximum 5, then 2", plain.Output.Schema, narrowed.Output.Schema)
	}
}

// TestStoppedIntentAsksAgain: stopping a round paused for an intent cancels
// the approval; resumed, the step asks for the intent again before any
// Stage 2 call.
func TestStoppedIntentAsksAgain(t *testing.T) {
	t.Parallel()
	store, reg := memstore.New(), enginetest.NewRegistry()
	model := scripted.New(replies(
		[]string{enginetest.Select(enginetest.Echo, "echo a greeting", nil, "", "text")},
		[]string{enginetest.Params(map[string]any{"text": "hi"})}, enginetest.Completes("done"))...)
	e := startEngine(t, intentConfig(), store, model, reg)
	ctx := context.Background()
	wf := intentPaused(t, e, store, reg, "greet")
	if _, err := e.Stop(ctx, "alice", wf.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Resume(ctx, "alice", wf.ID); err != nil {
		t.Fatal(err)
	}
	again := wait(t, e, wf.ID)
	p := again.PendingApproval
	if again.Status != workflow.StatusAwaitingApproval || p == nil || p.Kind != workflow.ApprovalIntent || p.ID == wf.PendingApproval.ID || p.Parameters != nil {
		t.Fatalf("resumed round = %s, pending %+v; want a new intent approval", again.Status, p)
	}
	traces, _ := store.Traces(ctx, wf.ID)
	for _, tr := range traces {
		if tr.Stage == workflow.StageTwo {
			t.Errorf("Stage 2 ran after the resume, before the intent was approved")
		}
	}
	if _, err := e.Decide(ctx, "alice", wf.ID, p.ID, workflow.Decision{Approve: true}); err != nil {
		t.Fatal(err)
	}
	if done := wait(t, e, wf.ID); done.Status != workflow.StatusCompleted || len(reg.Calls()) != 1 {
		t.Errorf("after approval: %s with %d executions, want completed with 1", done.Status, len(reg.Calls()))
	}
}
