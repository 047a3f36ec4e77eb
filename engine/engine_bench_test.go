package engine_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/workflow"
)

// fourPhases is a mode step without prompts: the engine's own work for a
// React step (two traced model calls, two checkpoints, the step commit).
func fourPhases(ctx context.Context, run workflow.Run) error {
	switch run.Workflow().Checkpoint.Phase {
	case workflow.PhaseSelect:
		if _, err := run.Generate(ctx, workflow.ModelCall{Stage: workflow.StageOne, Attempt: 1}); err != nil {
			return err
		}
		return run.Checkpoint(ctx, workflow.Checkpoint{Phase: workflow.PhaseParameterize, Selection: &workflow.Selection{Action: "test.echo"}})
	case workflow.PhaseParameterize:
		if _, err := run.Generate(ctx, workflow.ModelCall{Stage: workflow.StageTwo, Attempt: 1}); err != nil {
			return err
		}
		cp := *run.Workflow().Checkpoint
		cp.Phase, cp.Parameters = workflow.PhaseExecute, map[string]any{"text": "x"}
		return run.Checkpoint(ctx, cp)
	}
	// Each step's result differs, so the loop rule (checked every step)
	// never ends the round before maxSteps.
	wf := run.Workflow()
	return run.CommitStep(ctx, workflow.StepResult{Action: "test.echo", Executed: true, Messages: []workflow.Message{{
		ID: workflow.NewID(workflow.PrefixMessage), Round: wf.Round, Step: wf.Step,
		Role: workflow.RoleAction, Action: "test.echo", Status: workflow.MessageSuccess, Text: "x" + strconv.Itoa(wf.Step),
	}}})
}

// BenchmarkEngineStepOverhead measures the engine alone per step (no prompt
// rendering or parsing): 10-step rounds ending at maxSteps on memstore
// with an instant model.
func BenchmarkEngineStepOverhead(b *testing.B) {
	model := workflow.ModelFunc(func(context.Context, workflow.ModelRequest) (workflow.ModelResponse, error) {
		return workflow.ModelResponse{Text: "{}", PromptTokens: 100, CompletionTokens: 10}, nil
	})
	steps := &enginetest.Steps{}
	eng := newEngine(b, engine.Config{Observer: steps}, memstore.New(), model, fourPhases)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	cpu := enginetest.CPUTime()
	for b.Loop() {
		wf, err := eng.Create(ctx, engine.NewWorkflow{UserID: "alice", Prompt: "p", MaxSteps: 10})
		if err != nil {
			b.Fatal(err)
		}
		if got, err := eng.Wait(ctx, wf.ID); err != nil || got.StopReason != workflow.StopMaxSteps {
			b.Fatalf("round ended %+v, %v", got, err)
		}
	}
	n := float64(b.N * 10)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "wall-ns/step")
	b.ReportMetric(float64((enginetest.CPUTime()-cpu).Nanoseconds())/n, "cpu-ns/step")
	b.ReportMetric(float64(steps.Median().Nanoseconds()), "median-ns/step")
}
