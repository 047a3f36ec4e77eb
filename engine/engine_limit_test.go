package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/workflow"
)

// A round the failure breaker ended at its last allowed step keeps the
// checkpoint of the step after it, so the resumed round starts beyond
// maxSteps: Run.endAtLimit ends it at once with the mode's closing
// message, status completed, stop reason max_steps, and no step of the
// mode runs.
func TestResumePastTheLastStepEndsAtTheLimit(t *testing.T) {
	t.Parallel()
	const maxSteps = engine.MaxFailuresInARow // the breaker trips at the last step
	steps := make(chan int, 2*maxSteps)
	failing := func(ctx context.Context, run workflow.Run) error {
		wf := run.Workflow()
		steps <- wf.Step
		return run.CommitStep(ctx, workflow.StepResult{
			Action: "test.echo", Failed: true, Executed: true,
			Messages: []workflow.Message{{ID: workflow.NewID(workflow.PrefixMessage), Role: workflow.RoleAction,
				Round: wf.Round, Step: wf.Step, Action: "test.echo", Status: workflow.MessageError,
				Text: fmt.Sprintf("failure %d", wf.Step)}},
		})
	}
	store := memstore.New()
	e := newEngine(t, engine.Config{}, store, blocking, failing)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wf, err := e.Create(ctx, engine.NewWorkflow{UserID: "alice", Prompt: "p", MaxSteps: maxSteps})
	if err != nil {
		t.Fatal(err)
	}
	failed, err := e.Wait(ctx, wf.ID)
	if err != nil || failed.Status != workflow.StatusFailed || failed.StopReason != workflow.StopFailures || failed.Step != maxSteps {
		t.Fatalf("first run ended %+v (%v), want failed by the breaker at step %d", failed, err, maxSteps)
	}
	if len(steps) != maxSteps {
		t.Fatalf("the mode ran %d steps, want %d", len(steps), maxSteps)
	}
	if cp := failed.Checkpoint; cp == nil || cp.Step != maxSteps+1 || cp.Phase != workflow.PhaseSelect {
		t.Fatalf("failed round's checkpoint %+v, want select at step %d (where Resume goes on)", cp, maxSteps+1)
	}
	resumed, err := e.Resume(ctx, "alice", wf.ID)
	if err != nil {
		t.Fatal(err)
	}
	if resumed.Step != maxSteps+1 {
		t.Fatalf("resumed at step %d, want %d (past the last allowed step)", resumed.Step, maxSteps+1)
	}
	got, err := e.Wait(ctx, wf.ID)
	if err != nil || got.Status != workflow.StatusCompleted || got.StopReason != workflow.StopMaxSteps || got.Step != maxSteps {
		t.Fatalf("resumed round ended %+v (%v), want completed at the limit, step %d", got, err, maxSteps)
	}
	if len(steps) != maxSteps {
		t.Errorf("the mode ran %d steps after the resume, want none", len(steps)-maxSteps)
	}
	msgs, err := store.Messages(ctx, wf.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	last := msgs[len(msgs)-1]
	if last.Role != workflow.RoleAssistant || last.Text != "closing" || last.Step != maxSteps+1 || last.Round != 1 {
		t.Errorf("last message %+v, want the mode's closing message as the assistant's at step %d", last, maxSteps+1)
	}
}

// A rejected approval of the last allowed step goes on from the checkpoint
// the pause saved for the step after it, past maxSteps: Run.endAtLimit ends
// the round with the mode's closing message, and the mode runs no step.
func TestRejectingTheLastStepEndsAtTheLimit(t *testing.T) {
	t.Parallel()
	const maxSteps = 2
	steps := make(chan int, 2*maxSteps)
	pauseAtLast := func(ctx context.Context, run workflow.Run) error {
		wf := run.Workflow()
		steps <- wf.Step
		if wf.Step == maxSteps {
			return pauseFor(ctx, run, workflow.Gate{Action: "test.echo", Objective: "o", Parameters: map[string]any{"text": "x"}})
		}
		return run.CommitStep(ctx, workflow.StepResult{
			Action: "test.echo", Executed: true,
			Messages: []workflow.Message{{ID: workflow.NewID(workflow.PrefixMessage), Role: workflow.RoleAction,
				Round: wf.Round, Step: wf.Step, Action: "test.echo", Status: workflow.MessageSuccess, Text: "ok"}},
		})
	}
	store := memstore.New()
	e := newEngine(t, engine.Config{Approvals: holdEvery{}}, store, blocking, pauseAtLast)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wf, err := e.Create(ctx, engine.NewWorkflow{UserID: "alice", Prompt: "p", MaxSteps: maxSteps})
	if err != nil {
		t.Fatal(err)
	}
	paused, err := e.Wait(ctx, wf.ID)
	if err != nil || paused.Status != workflow.StatusAwaitingApproval || paused.Step != maxSteps {
		t.Fatalf("first run ended %+v (%v), want awaiting approval at step %d", paused, err, maxSteps)
	}
	if cp := paused.Checkpoint; cp == nil || cp.Step != maxSteps || cp.AfterReject == nil || cp.AfterReject.Step != maxSteps+1 {
		t.Fatalf("paused checkpoint %+v, want step %d going on at step %d after a rejection", cp, maxSteps, maxSteps+1)
	}
	if _, err := e.Decide(ctx, "alice", wf.ID, paused.PendingApproval.ID, workflow.Decision{Comment: "no"}); err != nil {
		t.Fatal(err)
	}
	got, err := e.Wait(ctx, wf.ID)
	if err != nil || got.Status != workflow.StatusCompleted || got.StopReason != workflow.StopMaxSteps || got.Step != maxSteps {
		t.Fatalf("round ended %+v (%v), want completed at the limit, step %d", got, err, maxSteps)
	}
	if len(steps) != maxSteps {
		t.Errorf("the mode ran %d steps, want %d (none after the rejection)", len(steps), maxSteps)
	}
	msgs, err := store.Messages(ctx, wf.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var shape []string
	for _, m := range msgs {
		shape = append(shape, fmt.Sprintf("%d:%s:%s", m.Step, m.Role, m.Status))
	}
	want := []string{"0:user:", "1:action:success", "2:action:rejected", "3:assistant:"}
	if fmt.Sprint(shape) != fmt.Sprint(want) {
		t.Errorf("messages %v, want %v", shape, want)
	}
}
