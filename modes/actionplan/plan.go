package actionplan

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/twostep/twostep/placeholders"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/textclip"
	"github.com/twostep/twostep/workflow"
)

// Attempts of the planning calls, as recorded in their traces: the repair
// call is the second attempt at a plan.
const (
	planAttempt   = 1
	repairAttempt = 2
)

// maxTraceLines bounds the dropped-step lines of a trace's error text; the
// trace's parsed plan lists every dropped step.
const maxTraceLines = 20

// planned is the outcome of one planning (or repair) call.
type planned struct {
	reply string
	// err says the reply holds no plan at all (ParsePlan's error); then
	// plan is empty.
	err  error
	plan Validated
}

// plan makes the planning call — or, when the checkpoint holds a planning
// reply that held no plan (phase plan, attempt 1), the repair call. A
// planning reply with no plan is saved with why it failed (phase plan,
// attempt 1, Previous) before the repair call, so a restart never repeats
// the finished planning call. A usable plan is saved with phase execute;
// otherwise the round ends as plan_unavailable. Model errors are returned
// unchanged.
func (m *Mode) plan(ctx context.Context, run workflow.Run) error {
	wf := run.Workflow()
	rendered, offered, err := m.planPrompt(wf, run.Messages(), run.Registry().Actions(), run.Connections())
	if err != nil {
		return err
	}
	env := Env{
		Registry: run.Registry(), Messages: run.Messages(), Connections: run.Connections(),
		MaxSteps: wf.MaxSteps - wf.Step + 1, Offered: offered,
	}
	if cp := wf.Checkpoint; cp != nil && cp.Phase == workflow.PhasePlan && cp.Attempt >= planAttempt {
		return m.repair(ctx, run, env, offered, cp.Previous, cp.Feedback)
	}
	out, err := call(ctx, run, workflow.StagePlan, planAttempt, rendered, env)
	if err != nil {
		return err
	}
	if out.err != nil {
		return run.Checkpoint(ctx, workflow.Checkpoint{
			Phase: workflow.PhasePlan, Attempt: planAttempt,
			Feedback: []string{workflow.PublicMessage(out.err)}, Previous: textclip.Cut(out.reply, prompts.MaxReplyBytes),
		})
	}
	return m.planned(ctx, run, out)
}

// repair makes the repair call for previous, the planning reply that held
// no plan for the reasons in problems.
func (m *Mode) repair(ctx context.Context, run workflow.Run, env Env, offered []workflow.ActionSpec, previous string, problems []string) error {
	rendered, err := m.prompts.Repair(prompts.RepairInput{
		Previous: previous, Actions: offered, Feedback: prompts.Feedback(problems),
	})
	if err != nil {
		return fmt.Errorf("actionplan: rendering the repair prompt: %w", err)
	}
	out, err := call(ctx, run, workflow.StageRepair, repairAttempt, rendered, env)
	if err != nil {
		return err
	}
	if out.err != nil {
		return unavailable(ctx, run, "the model's reply could not be read as a plan, even after a repair request", previous)
	}
	return m.planned(ctx, run, out)
}

// planned saves a usable plan with phase execute, or ends the round as
// plan_unavailable when no step of it is valid.
func (m *Mode) planned(ctx context.Context, run workflow.Run, out planned) error {
	if len(out.plan.Steps) == 0 {
		return unavailable(ctx, run, noValidStep(out.plan), out.reply)
	}
	next, err := checkpoint(workflow.PhaseExecute, state{Plan: out.plan.Steps})
	if err != nil {
		return err
	}
	return run.Checkpoint(ctx, *next)
}

// PlanPrompt renders the planning prompt exactly as Step sends it for a
// workflow in state wf with messages msgs: the user prompt, documents
// index, connections index and history, and as AVAILABLE_METHODS the
// Relevant subset of actions for the round's user prompt (top-K, then
// workflow.complete). It makes no model call and changes nothing. (The
// admin render route renders the plan through modes/inspect with
// Offered, which also takes a template override and feedback.)
func (m *Mode) PlanPrompt(wf *workflow.Workflow, msgs []workflow.Message, actions []workflow.ActionSpec, conns []workflow.Connection) (prompts.Rendered, error) {
	r, _, err := m.planPrompt(wf, msgs, actions, conns)
	return r, err
}

func (m *Mode) planPrompt(wf *workflow.Workflow, msgs []workflow.Message, actions []workflow.ActionSpec, conns []workflow.Connection) (prompts.Rendered, []workflow.ActionSpec, error) {
	round := 0
	if wf != nil {
		round = wf.Round
	}
	offered := m.Offered(placeholders.UserPromptText(msgs, round), actions)
	r, err := m.prompts.Plan(prompts.Stage1Input{Workflow: wf, Messages: msgs, Actions: offered, Connections: conns})
	if err != nil {
		return prompts.Rendered{}, nil, fmt.Errorf("actionplan: rendering the plan prompt: %w", err)
	}
	return r, offered, nil
}

// call makes one planning model call; the reply is parsed and validated
// inside the call's Check, so its trace records the validated plan
// (Parsed) and every dropped step's reason (Error).
func call(ctx context.Context, run workflow.Run, stage workflow.Stage, attempt int, r prompts.Rendered, env Env) (planned, error) {
	var out planned
	resp, err := run.Generate(ctx, workflow.ModelCall{
		Stage: stage, Attempt: attempt, Template: r.Template, Prompt: r.Messages,
		Facts: workflow.PromptFacts{Messages: run.Messages()},
		Check: func(reply string) (json.RawMessage, string) {
			out = check(reply, env)
			return out.trace()
		},
	})
	out.reply = resp.Text
	if resp.Truncated {
		// Never parsed: the repair call quotes it with the cause.
		out = planned{reply: resp.Text, err: workflow.Errorf(workflow.KindInvalid, "%s", workflow.TruncatedProblem(resp))}
	}
	return out, err
}

// check parses and validates one reply.
func check(reply string, env Env) planned {
	drafts, err := ParsePlan(reply)
	if err != nil {
		return planned{err: err}
	}
	return planned{plan: Validate(drafts, env)}
}

// trace returns what the call's trace records: the validated plan with its
// dropped steps, and a rejection text naming each dropped step and why (or
// why the reply held no plan).
func (p planned) trace() (json.RawMessage, string) {
	if p.err != nil {
		return nil, workflow.PublicMessage(p.err)
	}
	parsed, err := json.Marshal(p.plan)
	if err != nil {
		return nil, "encoding the validated plan: " + err.Error()
	}
	lines := make([]string, 0, maxTraceLines+2)
	if len(p.plan.Steps) == 0 {
		lines = append(lines, "no valid step in the plan")
	}
	for _, d := range p.plan.Dropped[:min(maxTraceLines, len(p.plan.Dropped))] {
		lines = append(lines, droppedLine(d))
	}
	if n := len(p.plan.Dropped) - maxTraceLines; n > 0 {
		lines = append(lines, fmt.Sprintf("and %d more dropped steps (see parsed)", n))
	}
	return parsed, strings.Join(lines, "\n")
}

func droppedLine(d Dropped) string {
	if d.Action == "" {
		return fmt.Sprintf("step %d dropped: %s", d.Index+1, d.Reason)
	}
	return fmt.Sprintf("step %d (%s) dropped: %s", d.Index+1, d.Action, d.Reason)
}

// noValidStep explains, for a person, why a parsed plan left nothing to run.
func noValidStep(v Validated) string {
	switch {
	case len(v.Dropped) == 0 && v.Truncated == 0:
		return "the model planned no step"
	case len(v.Dropped) == 0:
		return "the round has no step left to run the plan"
	}
	reasons := make([]string, 0, 3)
	for _, d := range v.Dropped[:min(3, len(v.Dropped))] {
		reasons = append(reasons, droppedLine(d))
	}
	more := ""
	if n := len(v.Dropped) - len(reasons); n > 0 {
		more = fmt.Sprintf("; and %d more", n)
	}
	return fmt.Sprintf("none of the %d planned steps was valid (%s%s)", len(v.Dropped), strings.Join(reasons, "; "), more)
}
