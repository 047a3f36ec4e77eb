package engine_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/twostep/twostep/approval"
	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/workflow"
)

// intentOn holds calls of its action under the intent rule; constraints
// are judged by approval.Policy, whose constraint methods need no
// registry.
type intentOn struct {
	action string
	*approval.Policy
}

func (p intentOn) NeedsApproval(action string, _ map[string]any) (bool, workflow.Effect) {
	return action == p.action, workflow.EffectWrite
}
func (p intentOn) NeedsIntentApproval(action string) bool { return action == p.action }

// gateStep asks the gate g once per run, sends the verdict, and ends the
// round when the step proceeds.
func gateStep(g workflow.Gate, verdicts chan<- workflow.Verdict) func(context.Context, workflow.Run) error {
	return func(ctx context.Context, run workflow.Run) error {
		v, err := run.Gate(ctx, g)
		if err != nil {
			return err
		}
		verdicts <- v
		if v.Paused {
			return nil
		}
		return run.CommitStep(ctx, workflow.StepResult{
			Messages: []workflow.Message{{ID: workflow.NewID(workflow.PrefixMessage), Role: workflow.RoleAssistant, Text: "done"}},
			End:      &workflow.RoundEnd{Status: workflow.StatusCompleted, Reason: workflow.StopCompleted},
		})
	}
}

// TestGateRule: the one approval rule, moment by moment — no policy or an
// action the policy lets run proceeds; a held call pauses for a call
// approval; an action under the intent rule pauses at the intent moment
// with Stage 1's context and resumes at Stage 2, and, planned (no
// selection), pauses at the call moment for an intent approval with its
// parameters shown.
func TestGateRule(t *testing.T) {
	t.Parallel()
	sel := &workflow.Selection{Action: enginetest.Echo, ActionObjective: "o", ParametersContext: "say hi",
		ParametersSchema: workflow.ParametersSchema{Fields: []workflow.FieldSpec{{Name: "text", Type: "string"}}}}
	stage2 := &workflow.Checkpoint{Phase: workflow.PhaseParameterize, Selection: sel}
	call := workflow.Gate{Moment: workflow.MomentCall, Action: enginetest.Echo, Objective: "o", Parameters: map[string]any{"text": "x"}}
	intent := workflow.Gate{Moment: workflow.MomentIntent, Action: enginetest.Echo, Objective: "o", Selection: sel, Resume: stage2}
	tests := []struct {
		name     string
		policy   workflow.ApprovalPolicy
		gate     workflow.Gate
		wantKind workflow.ApprovalKind // "" when the step proceeds
		wantAt   workflow.Phase
	}{
		{name: "no policy", gate: call},
		{name: "a call the policy lets run", policy: intentOn{action: enginetest.Remote}, gate: call},
		{name: "a held call", policy: holdEvery{}, gate: call, wantKind: workflow.ApprovalCall, wantAt: workflow.PhaseSelect},
		{name: "intent moment, no intent rule", policy: holdEvery{}, gate: intent},
		{name: "intent moment, intent rule", policy: intentOn{action: enginetest.Echo}, gate: intent,
			wantKind: workflow.ApprovalIntent, wantAt: workflow.PhaseParameterize},
		{name: "a planned call, intent rule", policy: intentOn{action: enginetest.Echo}, gate: call,
			wantKind: workflow.ApprovalIntent, wantAt: workflow.PhaseSelect},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			verdicts := make(chan workflow.Verdict, 4)
			e := newEngine(t, engine.Config{Approvals: tt.policy}, memstore.New(), blocking, gateStep(tt.gate, verdicts))
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			wf, err := e.Create(ctx, engine.NewWorkflow{UserID: "alice", Prompt: "p"})
			if err != nil {
				t.Fatal(err)
			}
			end, err := e.Wait(ctx, wf.ID)
			if err != nil {
				t.Fatal(err)
			}
			v := <-verdicts
			if tt.wantKind == "" {
				if v.Paused || v.Grant != nil || end.Status != workflow.StatusCompleted {
					t.Fatalf("verdict %+v, status %s: want proceed without a grant", v, end.Status)
				}
				return
			}
			p := end.PendingApproval
			if !v.Paused || end.Status != workflow.StatusAwaitingApproval || p == nil {
				t.Fatalf("verdict %+v, status %s: want paused", v, end.Status)
			}
			if p.Kind != tt.wantKind || end.Checkpoint.Phase != tt.wantAt || p.Effect != workflow.EffectWrite {
				t.Errorf("pending kind %s at %s effect %s, want %s at %s, write", p.Kind, end.Checkpoint.Phase, p.Effect, tt.wantKind, tt.wantAt)
			}
			if tt.gate.Moment == workflow.MomentIntent && (p.ParametersContext != "say hi" || !slices.Equal(p.Fields, sel.ParametersSchema.Fields) || p.Parameters != nil) {
				t.Errorf("intent approval shows %q %v %v, want Stage 1's context and fields, no parameters", p.ParametersContext, p.Fields, p.Parameters)
			}
			if tt.gate.Moment == workflow.MomentCall && p.Parameters["text"] != "x" {
				t.Errorf("pending parameters %v, want the call's", p.Parameters)
			}
		})
	}
}

// TestGateGrantsAnApprovedIntent: once a person approves an intent with a
// constraint, the step's next ask proceeds under that grant, and the
// verdict judges Stage 2's parameters by the constraint.
func TestGateGrantsAnApprovedIntent(t *testing.T) {
	t.Parallel()
	sel := &workflow.Selection{Action: enginetest.Echo, ActionObjective: "o",
		ParametersSchema: workflow.ParametersSchema{Fields: []workflow.FieldSpec{{Name: "text", Type: "string"}}}}
	g := workflow.Gate{Moment: workflow.MomentIntent, Action: enginetest.Echo, Objective: "o", Selection: sel,
		Resume: &workflow.Checkpoint{Phase: workflow.PhaseParameterize, Selection: sel}}
	verdicts := make(chan workflow.Verdict, 4)
	e := newEngine(t, engine.Config{Approvals: intentOn{action: enginetest.Echo, Policy: &approval.Policy{}}}, memstore.New(), blocking, gateStep(g, verdicts))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wf, err := e.Create(ctx, engine.NewWorkflow{UserID: "alice", Prompt: "p"})
	if err != nil {
		t.Fatal(err)
	}
	paused, err := e.Wait(ctx, wf.ID)
	if err != nil || paused.PendingApproval == nil {
		t.Fatalf("%+v %v, want paused", paused, err)
	}
	<-verdicts
	constraints := map[string]any{"text": map[string]any{"enum": []any{"hi"}}}
	if _, err := e.Decide(ctx, "alice", wf.ID, paused.PendingApproval.ID, workflow.Decision{Approve: true, Constraints: constraints}); err != nil {
		t.Fatal(err)
	}
	if end, err := e.Wait(ctx, wf.ID); err != nil || end.Status != workflow.StatusCompleted {
		t.Fatalf("%+v %v, want completed", end, err)
	}
	v := <-verdicts
	if v.Paused || v.Grant == nil || v.Grant.Kind != workflow.ApprovalIntent || v.Constraints["text"] == nil {
		t.Fatalf("verdict %+v, want proceed under the intent grant with its constraint", v)
	}
	if got := v.ConstraintProblems(map[string]any{"text": "hi"}); got != nil {
		t.Errorf("allowed value: %q", got)
	}
	if got := v.ConstraintProblems(map[string]any{"text": "bye"}); len(got) != 1 {
		t.Errorf("forbidden value: %q, want one problem", got)
	}
}

// TestGateProbe: a probe at the intent moment says whether the step
// would pause and commits nothing; the step then proceeds.
func TestGateProbe(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		policy workflow.ApprovalPolicy
		want   bool
	}{
		{"intent rule", intentOn{action: enginetest.Echo}, true},
		{"no intent rule", holdEvery{}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			verdicts := make(chan workflow.Verdict, 1)
			probe := workflow.Gate{Moment: workflow.MomentIntent, Action: enginetest.Echo, Probe: true}
			step := func(ctx context.Context, run workflow.Run) error {
				v, err := run.Gate(ctx, probe)
				if err != nil {
					return err
				}
				verdicts <- v
				return gateStep(workflow.Gate{Moment: workflow.MomentCall, Action: workflow.CompleteAction}, make(chan workflow.Verdict, 1))(ctx, run)
			}
			e := newEngine(t, engine.Config{Approvals: tt.policy}, memstore.New(), blocking, step)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			wf, err := e.Create(ctx, engine.NewWorkflow{UserID: "alice", Prompt: "p"})
			if err != nil {
				t.Fatal(err)
			}
			end, err := e.Wait(ctx, wf.ID)
			if err != nil {
				t.Fatal(err)
			}
			if v := <-verdicts; v.Paused != tt.want || end.Status != workflow.StatusCompleted || end.PendingApproval != nil {
				t.Errorf("probe paused %v (want %v); then status %s, pending %v: want completed, nothing pending", v.Paused, tt.want, end.Status, end.PendingApproval)
			}
		})
	}
}
