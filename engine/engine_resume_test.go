package engine_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/workflow"
)

// A round that failed on an error inside a step (a bug: stop reason
// failures, but no step committed) resumes the same step from
// its checkpoint: Resume must not skip it the way it skips past a step the
// failure breaker committed.
func TestResumeAfterAnErrorMidStepKeepsTheStep(t *testing.T) {
	t.Parallel()
	var broken atomic.Bool
	broken.Store(true)
	step := func(ctx context.Context, run workflow.Run) error {
		cp := run.Workflow().Checkpoint
		switch {
		case cp.Phase == workflow.PhaseSelect:
			return run.Checkpoint(ctx, workflow.Checkpoint{Phase: workflow.PhaseParameterize})
		case broken.Load():
			return workflow.Errorf(workflow.KindInternal, "a bug in the mode")
		}
		wf := run.Workflow()
		return run.CommitStep(ctx, workflow.StepResult{
			Messages: []workflow.Message{{ID: workflow.NewID(workflow.PrefixMessage), Role: workflow.RoleAssistant,
				Round: wf.Round, Step: wf.Step, Text: "done"}},
			End: &workflow.RoundEnd{Status: workflow.StatusCompleted, Reason: workflow.StopCompleted},
		})
	}
	store := memstore.New()
	e := newEngine(t, engine.Config{}, store, blocking, step)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	wf, err := e.Create(ctx, engine.NewWorkflow{UserID: "alice", Prompt: "p", MaxSteps: 1})
	if err != nil {
		t.Fatal(err)
	}
	failed, err := e.Wait(ctx, wf.ID)
	if err != nil || failed.Status != workflow.StatusFailed || failed.Step != 1 {
		t.Fatalf("first run ended %+v (%v), want failed at step 1", failed, err)
	}
	broken.Store(false)
	resumed, err := e.Resume(ctx, "alice", wf.ID)
	if err != nil {
		t.Fatal(err)
	}
	if resumed.Step != 1 || resumed.Checkpoint == nil || resumed.Checkpoint.Phase != workflow.PhaseParameterize {
		t.Errorf("resumed at step %d checkpoint %+v, want step 1 at phase parameterize", resumed.Step, resumed.Checkpoint)
	}
	got, err := e.Wait(ctx, wf.ID)
	if err != nil || got.Status != workflow.StatusCompleted || got.StopReason != workflow.StopCompleted {
		t.Fatalf("resumed round ended %+v (%v), want completed by its own step", got, err)
	}
	msgs, _ := store.Messages(ctx, wf.ID, 0, 0)
	if last := msgs[len(msgs)-1]; last.Text != "done" || last.Step != 1 {
		t.Errorf("last message %q at step %d, want the step's own %q at step 1", last.Text, last.Step, "done")
	}
}
