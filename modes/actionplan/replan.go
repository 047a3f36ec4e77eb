package actionplan

import (
	"context"
	"fmt"

	"github.com/twostep/twostep/placeholders"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/workflow"
)

// replan makes the re-planning call after a failed plan step: the plan so
// far (the round's steps with their outcomes, the failure, the steps not
// run yet) and the history go to the model, and its validated plan
// replaces st.Plan[st.PlanIndex:]. The new plan is saved with phase execute
// and the re-planning count, so a restart runs it without a new call. A
// reply that holds no plan, or whose every step is invalid, keeps the
// remaining steps as planned (the trace says why); a valid empty plan ends
// the round after the steps run. Model errors are returned unchanged.
func (m *Mode) replan(ctx context.Context, run workflow.Run, st state) error {
	wf := run.Workflow()
	msgs := run.Messages()
	offered := m.Offered(placeholders.UserPromptText(msgs, wf.Round), run.Registry().Actions())
	env := Env{
		Registry: run.Registry(), Messages: msgs, Connections: run.Connections(),
		MaxSteps: wf.MaxSteps - wf.Step + 1, Offered: offered,
	}
	index := min(st.PlanIndex, len(st.Plan))
	rendered, err := m.prompts.Replan(prompts.ReplanInput{
		Stage1Input: prompts.Stage1Input{Workflow: wf, Messages: msgs, Actions: offered, Connections: run.Connections()},
		Progress:    placeholders.PlanProgressText(msgs, wf.Round, st.Plan[index:]),
	})
	if err != nil {
		return fmt.Errorf("actionplan: rendering the re-planning prompt: %w", err)
	}
	out, err := call(ctx, run, workflow.StagePlan, st.Replans+1, rendered, env)
	if err != nil {
		return err
	}
	plan := st.Plan
	if out.err == nil && (len(out.plan.Steps) > 0 || len(out.plan.Dropped) == 0) {
		plan = append(st.Plan[:index:index], out.plan.Steps...)
	}
	next, err := checkpoint(workflow.PhaseExecute, state{Plan: plan, PlanIndex: index, Replans: st.Replans + 1})
	if err != nil {
		return err
	}
	return run.Checkpoint(ctx, *next)
}
