// Package react is the two-stage React mode (DESIGN §3): each step asks
// Stage 1 which action to run (no parameters), Stage 2 for the business
// parameters only, then executes the action and commits its message.
//
// Every phase is persisted before the next model call (through
// workflow.Run.Checkpoint), so a step interrupted by a crash resumes after
// its last finished model call. A rejected reply is retried with the
// problems as VALIDATION_FEEDBACK at most MaxRetries times; then the step
// is recorded as a failed action message and the round goes on.
package react

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/twostep/twostep/modes"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/workflow"
)

// MaxRetries is how many times a rejected Stage 1 or Stage 2 reply is
// retried with feedback before the step fails.
const MaxRetries = 2

// Mode is the React mode. It is stateless and safe for concurrent use by
// any number of rounds.
type Mode struct {
	prompts *prompts.Builder
}

var _ workflow.Mode = (*Mode)(nil)

// New returns the React mode rendering its prompts with b.
func New(b *prompts.Builder) *Mode { return &Mode{prompts: b} }

// Step runs the current step's next phase: select (Stage 1), parameterize
// (Stage 2; for workflow.complete it ends the round), or execute.
func (m *Mode) Step(ctx context.Context, run *workflow.Run) error {
	cp := run.Workflow().Checkpoint
	phase := workflow.PhaseSelect
	if cp != nil {
		phase = cp.Phase
	}
	switch phase {
	case workflow.PhaseSelect, "":
		return m.selectAction(ctx, run)
	case workflow.PhaseParameterize:
		if cp.Selection != nil {
			return m.parameterize(ctx, run, *cp.Selection)
		}
	case workflow.PhaseExecute:
		if cp.Selection != nil {
			sel := cp.Selection
			return modes.Execute(ctx, run, modes.StepCall{
				Action: sel.Action, Objective: sel.ActionObjective, Learnings: sel.Learnings,
				Parameters: cp.Parameters, Documents: sel.RequiredInputDocuments, Connection: sel.RequiredConnection,
			}, nil)
		}
	}
	return workflow.Errorf(workflow.KindInternal, "react: cannot run phase %q of step %d", phase, run.Workflow().Step)
}

// Closing returns the max-steps closing message (no model call).
func (m *Mode) Closing(run *workflow.Run) workflow.Message { return modes.Closing(run) }

// selectAction runs Stage 1 until a reply is accepted (then persists the
// selection with phase parameterize) or the retries are spent (then the
// step fails).
func (m *Mode) selectAction(ctx context.Context, run *workflow.Run) error {
	reg := run.Registry()
	env := prompts.Stage1Env{Registry: reg, Messages: run.Messages(), Connections: run.Connections()}
	var problems []string
	for attempt := 1; attempt <= 1+MaxRetries; attempt++ {
		rendered, err := m.prompts.Stage1(prompts.Stage1Input{
			Workflow: run.Workflow(), Messages: run.Messages(), Actions: reg.Actions(),
			Connections: run.Connections(), Feedback: prompts.Feedback(problems),
		})
		if err != nil {
			return fmt.Errorf("react: rendering stage 1: %w", err)
		}
		var res prompts.Stage1Result
		_, err = run.Generate(ctx, workflow.ModelCall{
			Stage: workflow.StageOne, Attempt: attempt, Template: rendered.Template, Prompt: rendered.Messages, JSON: true,
			Check: func(reply string) (json.RawMessage, string) {
				res = prompts.ParseStage1(reply, env)
				return res.Parsed, strings.Join(res.Problems, "\n")
			},
		})
		if err != nil {
			return err
		}
		if len(res.Problems) == 0 {
			sel := res.Selection
			return run.Checkpoint(ctx, workflow.Checkpoint{Phase: workflow.PhaseParameterize, Selection: &sel})
		}
		problems = res.Problems
	}
	return modes.Fail(ctx, run, modes.Failure{
		Reason: fmt.Sprintf("Stage 1 rejected %d times: %s", 1+MaxRetries, strings.Join(problems, "; ")),
	})
}

// parameterize runs Stage 2 for sel until its parameters are accepted, then
// persists them with phase execute — or, for workflow.complete, ends the
// round with the assistant message.
func (m *Mode) parameterize(ctx context.Context, run *workflow.Run, sel workflow.Selection) error {
	reg := run.Registry()
	fail := modes.Failure{Action: sel.Action, Objective: sel.ActionObjective, Learnings: sel.Learnings}
	spec, ok := reg.Action(sel.Action)
	if !ok {
		fail.Reason = fmt.Sprintf("action %q is no longer registered", sel.Action)
		return modes.Fail(ctx, run, fail)
	}
	var problems []string
	for attempt := 1; attempt <= 1+MaxRetries; attempt++ {
		rendered, err := m.prompts.Stage2(prompts.Stage2Input{Selection: sel, Action: spec, Feedback: prompts.Feedback(problems)})
		if err != nil {
			return fmt.Errorf("react: rendering stage 2: %w", err)
		}
		var res prompts.Stage2Result
		_, err = run.Generate(ctx, workflow.ModelCall{
			Stage: workflow.StageTwo, Attempt: attempt, Template: rendered.Template, Prompt: rendered.Messages, JSON: true,
			Check: func(reply string) (json.RawMessage, string) {
				res = prompts.ParseStage2(reply, spec, reg)
				return res.Parsed, strings.Join(res.Problems, "\n")
			},
		})
		if err != nil {
			return err
		}
		if len(res.Problems) == 0 {
			return m.parameterized(ctx, run, sel, res.Parameters)
		}
		problems = res.Problems
	}
	fail.Reason = fmt.Sprintf("Stage 2 rejected %d times: %s", 1+MaxRetries, strings.Join(problems, "; "))
	return modes.Fail(ctx, run, fail)
}

func (m *Mode) parameterized(ctx context.Context, run *workflow.Run, sel workflow.Selection, params map[string]any) error {
	if sel.Action == workflow.CompleteAction {
		text, _ := params["message"].(string)
		return modes.Complete(ctx, run, text, sel.Learnings)
	}
	return run.Checkpoint(ctx, workflow.Checkpoint{Phase: workflow.PhaseExecute, Selection: &sel, Parameters: params})
}
