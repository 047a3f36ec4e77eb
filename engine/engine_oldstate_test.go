package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/workflow"
)

// oldState is a workflow as the version before Checkpoint.Step stored it
// (the Redis store keeps this JSON): round 1 at step, with the checkpoint
// and pending approval given as JSON ("null" for none) and no "step" in
// either checkpoint.
func oldState(t *testing.T, id, status, stopReason string, step, maxSteps int, checkpoint, pending string) *workflow.Workflow {
	t.Helper()
	raw := fmt.Sprintf(`{"id":%q,"userId":"alice","mode":"react","status":%q,"stopReason":%q,
		"round":1,"step":%d,"maxSteps":%d,"title":"p","error":"",
		"stats":{"llmCalls":0,"promptTokens":0,"completionTokens":0,"actions":0,"byStage":null},
		"createdAt":"2026-11-01T10:00:00Z","updatedAt":"2026-11-01T10:05:00Z","version":7,
		"checkpoint":%s,"pendingApproval":%s}`, id, status, stopReason, step, maxSteps, checkpoint, pending)
	var wf workflow.Workflow
	if err := json.Unmarshal([]byte(raw), &wf); err != nil {
		t.Fatal(err)
	}
	return &wf
}

// A state stored by the version before checkpoints named their step goes
// on exactly where that version went on: Resume after the failure breaker
// runs the step after the last one (or ends at the limit when that was the
// last allowed one), Resume after a stop or an error inside a step runs
// that step again from its phase, a rejected approval goes on with the
// step after the rejected one, and a running round picked up by recovery
// goes on with its own step.
func TestOldStateGoesOnWhereItLeftOff(t *testing.T) {
	t.Parallel()
	const approvalID = "apr_01JD0000000000000000000000"
	pending := func(step int) string {
		return fmt.Sprintf(`{"id":%q,"round":1,"step":%d,"action":"test.echo","actionObjective":"o",
			"parameters":{"text":"x"},"documents":[],"connection":"","effect":"write",
			"requestedAt":"2026-11-01T10:05:00Z","expiresAt":"2999-01-01T00:00:00Z"}`, approvalID, step)
	}
	resume := func(ctx context.Context, e *engine.Engine, id string) error {
		_, err := e.Resume(ctx, "alice", id)
		return err
	}
	reject := func(ctx context.Context, e *engine.Engine, id string) error {
		_, err := e.Decide(ctx, "alice", id, approvalID, workflow.Decision{Comment: "no"})
		return err
	}
	tests := []struct {
		name                    string
		status, reason          string
		step, maxSteps          int
		checkpoint, pending     string
		act                     func(context.Context, *engine.Engine, string) error // nil: recovery
		wantRan                 string                                              // "step/phase" the mode saw
		wantReason              workflow.StopReason
		wantStep, wantCloseStep int
	}{
		{
			name: "breaker", status: "failed", reason: "failures", step: 3, maxSteps: 5,
			checkpoint: `{"phase":"select","failures":3}`, pending: "null", act: resume,
			wantRan: "4/select", wantReason: workflow.StopCompleted, wantStep: 4, wantCloseStep: 4,
		},
		{
			name: "breaker at the last step", status: "failed", reason: "failures", step: 3, maxSteps: 3,
			checkpoint: `{"phase":"select","failures":3}`, pending: "null", act: resume,
			wantRan: "", wantReason: workflow.StopMaxSteps, wantStep: 3, wantCloseStep: 4,
		},
		{
			name: "error inside a step", status: "failed", reason: "failures", step: 2, maxSteps: 5,
			checkpoint: `{"phase":"parameterize","failures":2}`, pending: "null", act: resume,
			wantRan: "2/parameterize", wantReason: workflow.StopCompleted, wantStep: 2, wantCloseStep: 2,
		},
		{
			name: "stopped", status: "stopped", reason: "stopped", step: 2, maxSteps: 5,
			checkpoint: `{"phase":"execute","failures":0}`, pending: "null", act: resume,
			wantRan: "2/execute", wantReason: workflow.StopCompleted, wantStep: 2, wantCloseStep: 2,
		},
		{
			name: "rejected approval", status: "awaiting_approval", reason: "", step: 2, maxSteps: 5,
			checkpoint: `{"phase":"execute","failures":0,"afterReject":{"phase":"select","failures":0}}`,
			pending:    pending(2), act: reject,
			wantRan: "3/select", wantReason: workflow.StopCompleted, wantStep: 3, wantCloseStep: 3,
		},
		{
			name: "rejected approval of the last step", status: "awaiting_approval", reason: "", step: 2, maxSteps: 2,
			checkpoint: `{"phase":"execute","failures":0,"afterReject":{"phase":"select","failures":0}}`,
			pending:    pending(2), act: reject,
			wantRan: "", wantReason: workflow.StopMaxSteps, wantStep: 2, wantCloseStep: 3,
		},
		{
			name: "running", status: "running", reason: "", step: 2, maxSteps: 5,
			checkpoint: `{"phase":"parameterize","failures":1}`, pending: "null",
			wantRan: "2/parameterize", wantReason: workflow.StopCompleted, wantStep: 2, wantCloseStep: 2,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var ran []string
			complete := func(ctx context.Context, run workflow.Run) error {
				wf := run.Workflow()
				mu.Lock()
				ran = append(ran, fmt.Sprintf("%d/%s", wf.Step, wf.Checkpoint.Phase))
				mu.Unlock()
				return run.CommitStep(ctx, workflow.StepResult{
					Messages: []workflow.Message{{ID: workflow.NewID(workflow.PrefixMessage), Role: workflow.RoleAssistant,
						Round: wf.Round, Step: wf.Step, Text: "done"}},
					End: &workflow.RoundEnd{Status: workflow.StatusCompleted, Reason: workflow.StopCompleted},
				})
			}
			store := memstore.New()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			id := workflow.NewID(workflow.PrefixWorkflow)
			old := oldState(t, id, tc.status, tc.reason, tc.step, tc.maxSteps, tc.checkpoint, tc.pending)
			if old.Checkpoint.Step != 0 {
				t.Fatalf("the old state decoded with checkpoint step %d, want 0 (no such field then)", old.Checkpoint.Step)
			}
			if _, _, err := store.Commit(ctx, workflow.Commit{Workflow: old, Messages: []workflow.Message{{
				ID: workflow.NewID(workflow.PrefixMessage), Round: 1, Role: workflow.RoleUser, Text: "p"}}}); err != nil {
				t.Fatal(err)
			}
			e := newEngine(t, engine.Config{}, store, blocking, complete)
			if tc.act != nil {
				if err := tc.act(ctx, e.Engine, id); err != nil {
					t.Fatal(err)
				}
			}
			got, err := e.Wait(ctx, id)
			if err != nil || got.Status != workflow.StatusCompleted || got.StopReason != tc.wantReason || got.Step != tc.wantStep {
				t.Fatalf("ended %s/%s at step %d (%v), want completed/%s at step %d", got.Status, got.StopReason, got.Step, err, tc.wantReason, tc.wantStep)
			}
			mu.Lock()
			if strings.Join(ran, " ") != tc.wantRan {
				t.Errorf("the mode ran %q, want %q", ran, tc.wantRan)
			}
			mu.Unlock()
			msgs, err := store.Messages(ctx, id, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			if last := msgs[len(msgs)-1]; last.Role != workflow.RoleAssistant || last.Step != tc.wantCloseStep {
				t.Errorf("last message %s at step %d, want the assistant's at step %d", last.Role, last.Step, tc.wantCloseStep)
			}
		})
	}
}
