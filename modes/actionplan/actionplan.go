// Package actionplan is the action-plan compatibility mode (DESIGN §5): one
// model call plans the whole round as a list of steps, the way the older
// gateway's planner did, and the steps then run in order through the same
// executor, reference resolver and message creator as React mode
// (modes.Execute, workflow.ResolveDocuments, package messages).
//
// A round goes through two persisted phases:
//
//	plan (the planning call, and at most one repair call) -> execute (one plan step per Step)
//	                                                          -> replan (after a failed step) -> execute
//
// A planning reply that holds no plan is saved (workflow.Checkpoint.Previous,
// phase plan, attempt 1) before the repair call, and the validated plan is
// saved in the checkpoint (its state in workflow.Checkpoint.Mode: the plan and the index of the next step) before
// any step runs, so a restarted engine continues the
// plan where it stopped without a new planning call. A reply that holds no
// plan gets one repair call; when that fails too, or when no step of the
// plan is valid, the round ends with one assistant message saying the plan
// was unavailable and stop reason plan_unavailable.
//
// A failed plan step (an action error, inputs that did not resolve) is
// followed by one re-planning call (template "replan", stage plan) that
// sees the plan so far, the failure and the history; its validated plan
// replaces the steps not run yet. At most Options.MaxReplans such calls are
// made per round; the count is saved in the checkpoint with the new plan
// (the state's Replans), so a restart never repeats a saved
// re-planning call. A re-planning reply that holds no usable step keeps the
// remaining steps as they were.
//
// Plans may use this engine's step shape or SAGE's: {"type": "tool",
// "name": ..., "arguments": {...}} and {"type": "reply", "text": ...}, a
// reply step being the round's closing answer (workflow.complete). Steps
// are validated against the methods the prompt offered (top-K), never the
// whole registry.
package actionplan

import (
	"context"
	"fmt"

	"github.com/twostep/twostep/modes"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/workflow"
)

// Options configures the mode.
type Options struct {
	// TopK is how many actions (besides workflow.complete) the plan prompt
	// offers, the most relevant to the user prompt first; 0 means
	// DefaultTopK.
	TopK int
	// MaxReplans bounds the re-planning calls after failed steps per
	// round; 0 means DefaultMaxReplans, a negative value turns re-planning
	// off (a failed step leaves the rest of the plan to run as planned).
	MaxReplans int
}

// DefaultMaxReplans is Options.MaxReplans when it is 0.
const DefaultMaxReplans = 2

// Mode is the action-plan mode. It is stateless and safe for concurrent
// use by any number of rounds.
type Mode struct {
	prompts    *prompts.Builder
	topK       int
	maxReplans int
}

var _ workflow.Mode = (*Mode)(nil)

// New returns the action-plan mode rendering its prompts (templates "plan"
// and "repair") with b.
func New(b *prompts.Builder, opts Options) *Mode {
	k := opts.TopK
	if k <= 0 {
		k = DefaultTopK
	}
	r := opts.MaxReplans
	switch {
	case r == 0:
		r = DefaultMaxReplans
	case r < 0:
		r = 0
	}
	return &Mode{prompts: b, topK: k, maxReplans: r}
}

// Offered returns the actions the plan prompt offers for prompt: the
// TopK most relevant of all, plus workflow.complete. The admin render
// route is given this method, so it offers exactly what the mode does.
func (m *Mode) Offered(prompt string, all []workflow.ActionSpec) []workflow.ActionSpec {
	return Relevant(all, prompt, m.topK)
}

// Step runs the round's next phase: the planning call when no plan is
// saved (phase select — a fresh round or a resumed one without a plan — or
// plan), else the next plan step (phase execute). After the last plan step
// it ends the round with an assistant message listing what was done (no
// model call); a workflow.complete step ends it with that step's message.
func (m *Mode) Step(ctx context.Context, run workflow.Run) error {
	cp := run.Workflow().Checkpoint
	phase := workflow.PhaseSelect
	if cp != nil {
		phase = cp.Phase
	}
	st, err := stateOf(cp)
	if err != nil {
		return err
	}
	switch phase {
	case workflow.PhaseSelect, workflow.PhasePlan, "":
		return m.plan(ctx, run)
	case workflow.PhaseExecute:
		if len(st.Plan) > 0 {
			return m.execute(ctx, run, st)
		}
	case workflow.PhaseReplan:
		if len(st.Plan) > 0 {
			return m.replan(ctx, run, st)
		}
	}
	return workflow.Errorf(workflow.KindInternal, "actionplan: cannot run phase %q of step %d", phase, run.Workflow().Step)
}

// Closing returns the max-steps closing message (no model call), the same
// as React mode's.
func (m *Mode) Closing(run workflow.Run) workflow.Message { return modes.Closing(run) }

// execute runs plan step st.PlanIndex through the shared executor and
// saves the index of the step after it; past the last step it ends the
// round.
func (m *Mode) execute(ctx context.Context, run workflow.Run, st state) error {
	i := st.PlanIndex
	if i >= len(st.Plan) {
		return finish(ctx, run)
	}
	step := st.Plan[i]
	if step.Action == workflow.CompleteAction {
		text, _ := step.Parameters["message"].(string)
		return modes.Complete(ctx, run, text, nil)
	}
	after := state{Plan: st.Plan, PlanIndex: i + 1, Replans: st.Replans}
	next, err := checkpoint(workflow.PhaseExecute, after)
	if err != nil {
		return err
	}
	call := modes.StepCall{
		Action:     step.Action,
		Objective:  fmt.Sprintf("plan step %d of %d", i+1, len(st.Plan)),
		Parameters: step.Parameters,
		Documents:  step.Documents,
		Connection: step.Connection,
		Label:      step.ResultLabel,
	}
	if st.Replans < m.maxReplans {
		if call.OnFailure, err = checkpoint(workflow.PhaseReplan, after); err != nil {
			return err
		}
	}
	return modes.Execute(ctx, run, call, next)
}
