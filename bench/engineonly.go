package bench

import (
	"context"

	"github.com/twostep/twostep/modes"
	"github.com/twostep/twostep/workflow"
)

// NewTwostepEngine starts a twostep engine over store with a mode that
// renders and parses no prompt: each step makes the same two traced model
// calls, two checkpoints and one step commit as the React mode, and runs
// the echo action through modes.Execute (action trace and message
// included), but its model calls carry an empty prompt and its "choice"
// is fixed in code. It is the engine's and the store's share of a React
// step.
func NewTwostepEngine(store workflow.Store, task Task, opts ...option) (*Twostep, error) {
	t := &Twostep{store: gatewayStore(store), log: &echoLog{}, task: task}
	for _, o := range opts {
		o(t)
	}
	model := workflow.ModelFunc(func(context.Context, workflow.ModelRequest) (workflow.ModelResponse, error) {
		t.calls.Add(1)
		return workflow.ModelResponse{Text: "{}", Model: "fake", PromptTokens: 100, CompletionTokens: 10}, nil
	})
	if err := t.start(model, map[workflow.ModeName]workflow.Mode{workflow.ModeReact: engineOnly{final: task.Steps()}}); err != nil {
		return nil, err
	}
	return t, nil
}

// engineOnly is the prompt-less mode of NewTwostepEngine.
type engineOnly struct {
	final int // the step that completes the round
}

var _ workflow.Mode = engineOnly{}

// Step runs the next phase of a step: select, parameterize, execute. The
// last step (the task's final answer) completes the round instead of
// executing.
func (m engineOnly) Step(ctx context.Context, run workflow.Run) error {
	wf := run.Workflow()
	final := wf.Step >= m.final
	action := EchoAction
	if final {
		action = workflow.CompleteAction
	}
	phase := workflow.PhaseSelect
	if wf.Checkpoint != nil && wf.Checkpoint.Phase != "" {
		phase = wf.Checkpoint.Phase
	}
	switch phase {
	case workflow.PhaseSelect:
		if _, err := run.Generate(ctx, workflow.ModelCall{Stage: workflow.StageOne, Attempt: 1}); err != nil {
			return err
		}
		return run.Checkpoint(ctx, workflow.Checkpoint{Phase: workflow.PhaseParameterize, Selection: &workflow.Selection{Action: action}})
	case workflow.PhaseParameterize:
		if _, err := run.Generate(ctx, workflow.ModelCall{Stage: workflow.StageTwo, Attempt: 1}); err != nil {
			return err
		}
		if final {
			return modes.Complete(ctx, run, Answer, nil)
		}
		cp := *wf.Checkpoint
		cp.Phase, cp.Parameters = workflow.PhaseExecute, map[string]any{"text": ToolInput(wf.Step)}
		return run.Checkpoint(ctx, cp)
	}
	return modes.Execute(ctx, run, modes.StepCall{Action: action, Objective: "echo", Parameters: wf.Checkpoint.Parameters}, nil)
}

// Closing is never reached: the last step completes the round.
func (engineOnly) Closing(run workflow.Run) workflow.Message { return modes.Closing(run) }
