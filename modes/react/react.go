// Package react is the two-stage React mode (DESIGN §3): each step asks
// Stage 1 which action to run (no parameters), Stage 2 for the business
// parameters only, then executes the action and commits its message.
//
// Every model call is followed by a persisted transition (through
// workflow.Run.Checkpoint), so a step interrupted by a crash resumes after
// its last finished model call and never repeats it. A rejected reply is
// retried with the problems as VALIDATION_FEEDBACK at most MaxRetries
// times; each rejected attempt is persisted with its feedback
// (workflow.Checkpoint.Attempt and Feedback), so the retries survive a
// restart too. Then the step is recorded as a failed action message and the
// round goes on.
//
// Before a step's first Stage 1 call, when WORKFLOW_HISTORY would drop
// entries over its budget, a compaction call (stage compact, template
// "compact") summarises the entries about to be dropped, folding in the
// previous summary; the summary is committed as a message of role summary
// and the history renders it in place of the entries it covers. Off with
// prompts.Options.NoCompaction.
package react

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/twostep/twostep/modes"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/templates"
	"github.com/twostep/twostep/workflow"
)

// MaxRetries is how many times a rejected Stage 1 or Stage 2 reply is
// retried with feedback before the step fails.
const MaxRetries = 2

// Mode is the React mode. It keeps no state of any round (everything a
// step needs is in the run and its checkpoint) and is safe for concurrent
// use by any number of rounds.
type Mode struct {
	prompts *prompts.Builder
	// grounded is which Stage 2 replies an ungrounded value rejects.
	grounded Grounded
	// noEarly turns the early start of Stage 2 off (EarlyStage2).
	noEarly bool
}

var _ workflow.Mode = (*Mode)(nil)
var _ workflow.AskedFieldsChecker = (*Mode)(nil)

// New returns the React mode rendering its prompts with b, configured by
// opts.
func New(b *prompts.Builder, opts ...Option) *Mode {
	m := &Mode{prompts: b, grounded: GroundedNever}
	for _, o := range opts {
		o(m)
	}
	return m
}

// Step runs the current step's next phase once: a Stage 1 attempt (select),
// a Stage 2 attempt (parameterize; for workflow.complete it ends the
// round; skipped when the step has no parameter to fill), or the action
// (execute). Every model call it makes is followed
// by one persisted transition.
func (m *Mode) Step(ctx context.Context, run workflow.Run) error {
	cp := run.Workflow().Checkpoint
	phase := workflow.PhaseSelect
	if cp != nil {
		phase = cp.Phase
	}
	switch phase {
	case workflow.PhaseSelect, "":
		return m.selectAction(ctx, run, cp)
	case workflow.PhaseParameterize:
		if cp.Selection != nil {
			return m.parameterize(ctx, run, cp)
		}
	case workflow.PhaseExecute:
		if cp.Selection != nil {
			sel := cp.Selection
			if sel.Action == workflow.CompleteAction { // a fork's edited parameters end the round
				return m.parameterized(ctx, run, *sel, cp.Parameters, nil)
			}
			return modes.Execute(ctx, run, modes.StepCall{
				Action: sel.Action, Objective: sel.ActionObjective, Learnings: sel.Learnings,
				Parameters: cp.Parameters, Documents: sel.RequiredInputDocuments, Connection: sel.RequiredConnection,
			}, nil)
		}
	}
	return workflow.Errorf(workflow.KindInternal, "react: cannot run phase %q of step %d", phase, run.Workflow().Step)
}

// Closing returns the max-steps closing message (no model call).
func (m *Mode) Closing(run workflow.Run) workflow.Message { return modes.Closing(run) }

// CheckAskedFields is prompts.CheckAskedFields, the one rule for the
// parameters Stage 2 may fill: the engine judges a person's edited
// parameters of a paused step by it (workflow.AskedFieldsChecker).
func (m *Mode) CheckAskedFields(params map[string]any, action workflow.ActionSpec, asked []workflow.FieldSpec) []string {
	return m.prompts.CheckAskedFields(params, action, asked)
}

// selectAction makes one Stage 1 attempt, with Stage 1's native output
// schema for providers that enforce one (the reply is parsed and validated
// the same way whatever the provider enforced). An accepted reply persists the
// selection with phase parameterize; a rejected one persists the attempt
// and its problems (phase select, retried by the next Step with them as
// feedback) until the retries are spent, then the step fails.
func (m *Mode) selectAction(ctx context.Context, run workflow.Run, cp *workflow.Checkpoint) error {
	attempt, problems := nextAttempt(cp)
	if attempt > 1+MaxRetries {
		return modes.Fail(ctx, run, modes.Failure{Reason: rejected("Stage 1", attempt-1, problems)})
	}
	st, err := stateOf(cp)
	if err != nil {
		return err
	}
	if attempt == 1 && !st.CompactionSkipped {
		if done, err := m.compact(ctx, run); done || err != nil {
			return err
		}
	}
	reg := run.Registry()
	env := prompts.Stage1Env{Registry: reg, Messages: run.Messages(), Connections: run.Connections()}
	var res prompts.Stage1Result
	output := m.prompts.Stage1Output(reg.Actions(), run.Connections())
	call := workflow.ModelCall{
		Stage: workflow.StageOne, Attempt: attempt, JSON: prompts.ObjectReply(workflow.StageOne),
		MaxTokens: maxTokens(cp), Output: &output, CacheKey: cacheKey(run, workflow.StageOne),
		Facts: workflow.PromptFacts{Messages: run.Messages()},
		Check: func(reply string) (json.RawMessage, string) {
			res = prompts.ParseStage1(reply, env)
			return res.Parsed, strings.Join(res.Problems, "\n")
		},
	}
	rendered, err := m.stage1Prompt(run, problems, templateOutput(run.PlannedOutput(call)))
	if err != nil {
		return fmt.Errorf("react: rendering stage 1: %w", err)
	}
	call.Template, call.Prompt, call.CachePrefix, call.Inputs = rendered.Template, rendered.Messages, rendered.CachePrefix, rendered.Placeholders
	call.CacheSealed = rendered.CacheSealed
	early := m.newEarly(ctx, run)
	if early != nil {
		call.Stream = early.fn
	}
	resp, err := run.Generate(ctx, call)
	if resp.Truncated {
		res = prompts.Stage1Result{Problems: []string{workflow.TruncatedProblem(resp)}}
	}
	a, stands := early.take(err == nil && len(res.Problems) == 0, res.Selection)
	early.release()
	if stands {
		return m.earlyDone(ctx, run, m.Selected(reg, res.Selection), a)
	}
	switch {
	case err != nil:
		return err
	case len(res.Problems) == 0:
		next := m.Selected(reg, res.Selection)
		if v, err := intentGate(ctx, run, *next.Selection, next); v.Paused || err != nil {
			return err
		}
		return run.Checkpoint(ctx, next)
	case attempt <= MaxRetries:
		return run.Checkpoint(ctx, workflow.Checkpoint{
			Phase: workflow.PhaseSelect, Attempt: attempt, Feedback: res.Problems, MaxTokens: retryTokens(cp, resp),
		})
	}
	return modes.Fail(ctx, run, modes.Failure{Reason: rejected("Stage 1", attempt, res.Problems)})
}

// intentGate asks the approval gate at the intent moment (after Stage 1,
// before Stage 2) about the step of sel, which resumes from next once
// approved (DESIGN §10.4).
func intentGate(ctx context.Context, run workflow.Run, sel workflow.Selection, next workflow.Checkpoint) (workflow.Verdict, error) {
	return run.Gate(ctx, workflow.Gate{
		Moment: workflow.MomentIntent, Action: sel.Action, Objective: sel.ActionObjective,
		Documents: sel.RequiredInputDocuments, Connection: sel.RequiredConnection, Selection: &sel, Resume: &next,
	})
}

// nothingToFill reports whether sel's step runs with no parameters and
// so needs no Stage 2 call: Stage 1 asked for no field, the action
// requires none (prompts.NeedsStage2) and its schema accepts {}. The
// round's answer (workflow.complete) always has its message to fill.
func (m *Mode) nothingToFill(reg workflow.Registry, sel workflow.Selection) bool {
	spec, ok := reg.Action(sel.Action)
	if !ok || sel.Action == workflow.CompleteAction || m.prompts.NeedsStage2(spec, sel.ParametersSchema.Fields) {
		return false
	}
	return len(reg.ValidateParameters(sel.Action, map[string]any{})) == 0
}

// stage1Prompt renders the Stage 1 prompt with every registered action.
func (m *Mode) stage1Prompt(run workflow.Run, problems []string, out templates.Output) (prompts.Rendered, error) {
	repeats := run.Repeats()
	return m.prompts.Stage1(prompts.Stage1Input{
		Workflow: run.Workflow(), Messages: run.Messages(), Actions: run.Registry().Actions(),
		Connections: run.Connections(), Feedback: prompts.Feedback(problems), Repeats: &repeats, Output: out,
	})
}

// cacheKey is the prompt cache key of the workflow's calls of stage
// (DESIGN §10.1): "<workflowId>:<stage>".
func cacheKey(run workflow.Run, stage workflow.Stage) string {
	return run.Workflow().ID + ":" + string(stage)
}

// templateOutput is the template output for a call sent in mode: a
// native mode gives the provider the reply's shape, so the prompt leaves
// it out (DESIGN §10.1).
func templateOutput(mode workflow.OutputMode) templates.Output {
	if mode.Native() {
		return templates.NativeOutput
	}
	return templates.TextOutput
}

// parameterize makes one Stage 2 attempt for the checkpoint's selection
// (stage2Call) and commits its outcome (stage2Done).
func (m *Mode) parameterize(ctx context.Context, run workflow.Run, cp *workflow.Checkpoint) error {
	sel := *cp.Selection
	reg := run.Registry()
	fail := modes.Failure{Action: sel.Action, Objective: sel.ActionObjective, Learnings: sel.Learnings}
	spec, ok := reg.Action(sel.Action)
	if !ok {
		fail.Reason = fmt.Sprintf("action %q is no longer registered", sel.Action)
		return modes.Fail(ctx, run, fail)
	}
	// Stage 2 of an action under the intent rule runs only once the
	// intent is approved (or a standing approval covers it): a round
	// stopped while it waited, then resumed, asks again here.
	verdict, err := intentGate(ctx, run, sel, workflow.Checkpoint{Phase: workflow.PhaseParameterize, Selection: &sel})
	if verdict.Paused || err != nil {
		return err
	}
	attempt, problems := nextAttempt(cp)
	if attempt > 1+MaxRetries {
		fail.Reason = rejected("Stage 2", attempt-1, problems)
		return modes.Fail(ctx, run, fail)
	}
	a := m.stage2Call(ctx, run, stage2Ask{sel: sel, spec: spec, attempt: attempt, problems: problems, maxTokens: maxTokens(cp), verdict: verdict})
	return m.stage2Done(ctx, run, cp, a)
}

// stage2Ask is what one Stage 2 attempt is made of.
type stage2Ask struct {
	sel       workflow.Selection
	spec      workflow.ActionSpec
	attempt   int
	problems  []string // the feedback of the attempt before
	maxTokens int
	// verdict is the approval gate's at the intent moment: its
	// constraints narrow the schema and judge the reply, its grant is
	// kept for the call moment.
	verdict workflow.Verdict
	// early and stream are an early Stage 2 call's (early.go): its
	// handle, and the Stream of its call.
	early  *workflow.EarlyStart
	stream func(string)
}

// stage2Attempt is the outcome of one Stage 2 call.
type stage2Attempt struct {
	ask  stage2Ask
	resp workflow.ModelResponse
	res  prompts.Stage2Result
	err  error
}

// stage2Call makes one Stage 2 call for ask; it commits nothing.
func (m *Mode) stage2Call(ctx context.Context, run workflow.Run, ask stage2Ask) stage2Attempt {
	sel, spec, reg := ask.sel, ask.spec, run.Registry()
	// An intent approval's constraints narrow the schema Stage 2 is shown
	// and sent, and the reply must satisfy them (DESIGN §10.4).
	constraints, verdict := ask.verdict.Constraints, ask.verdict
	in := prompts.Stage2Input{Selection: sel, Action: workflow.NarrowSpec(spec, constraints), Feedback: prompts.Feedback(ask.problems)}
	out := stage2Attempt{ask: ask}
	output, err := m.prompts.Stage2Output(in)
	if err != nil {
		out.err = fmt.Errorf("react: rendering stage 2: %w", err)
		return out
	}
	var ungrounded []string
	// What Stage 2 is shown: the narrowed schema's enums and the
	// constraints themselves count as given (DESIGN §10.4).
	grounding := prompts.Stage2Grounding(sel, in.Action)
	if len(constraints) > 0 {
		grounding.Constraints, _ = json.Marshal(constraints)
	}
	call := workflow.ModelCall{
		Stage: workflow.StageTwo, Attempt: ask.attempt, JSON: prompts.ObjectReply(workflow.StageTwo),
		MaxTokens: ask.maxTokens, Output: &output.Output, FromNative: output.FromNative, CacheKey: cacheKey(run, workflow.StageTwo),
		Facts: workflow.PromptFacts{Messages: run.Messages(), Selection: &sel}, Early: ask.early, Stream: ask.stream,
		Check: func(reply string) (json.RawMessage, string) {
			out.res = m.prompts.ParseStage2(reply, spec, sel.ParametersSchema.Fields, reg)
			if out.res.Parameters != nil {
				out.res.Problems = append(out.res.Problems, verdict.ConstraintProblems(out.res.Parameters)...)
			}
			ungrounded = prompts.Ungrounded(out.res.Parameters, grounding)
			if len(ungrounded) > 0 && m.grounded.rejects(effectOf(reg, spec, out.res.Parameters)) {
				out.res.Problems = append(out.res.Problems, prompts.UngroundedProblems(ungrounded)...)
			}
			return out.res.Parsed, strings.Join(out.res.Problems, "\n")
		},
		Ungrounded: func() []string { return ungrounded },
	}
	in.Output = templateOutput(run.PlannedOutput(call))
	rendered, err := m.prompts.Stage2(in)
	if err != nil {
		out.err = fmt.Errorf("react: rendering stage 2: %w", err)
		return out
	}
	call.Template, call.Prompt, call.CachePrefix, call.Inputs = rendered.Template, rendered.Messages, rendered.CachePrefix, rendered.Placeholders
	out.resp, out.err = run.Generate(ctx, call)
	if out.resp.Truncated {
		out.res = prompts.Stage2Result{Problems: []string{workflow.TruncatedProblem(out.resp)}}
	}
	return out
}

// stage2Done commits the outcome of a Stage 2 attempt made from cp:
// accepted parameters are persisted with phase execute — or, for
// workflow.complete, end the round; a rejected reply persists the attempt
// and its problems (phase parameterize) until the retries are spent, then
// the step fails.
func (m *Mode) stage2Done(ctx context.Context, run workflow.Run, cp *workflow.Checkpoint, a stage2Attempt) error {
	sel, grant := a.ask.sel, a.ask.verdict.Grant
	switch {
	case a.err != nil:
		return a.err
	case len(a.res.Problems) == 0:
		return m.parameterized(ctx, run, sel, a.res.Parameters, grant)
	case a.ask.attempt <= MaxRetries:
		return run.Checkpoint(ctx, workflow.Checkpoint{
			Phase: workflow.PhaseParameterize, Selection: &sel, Attempt: a.ask.attempt, Feedback: a.res.Problems,
			MaxTokens: retryTokens(cp, a.resp), Approval: grant,
		})
	}
	return modes.Fail(ctx, run, modes.Failure{Action: sel.Action, Objective: sel.ActionObjective, Learnings: sel.Learnings,
		Reason: rejected("Stage 2", a.ask.attempt, a.res.Problems)})
}

// nextAttempt returns the number of the current phase's next model call and
// the feedback it carries, as the last rejected attempt persisted them (1
// and none for a phase not tried yet).
func nextAttempt(cp *workflow.Checkpoint) (int, []string) {
	if cp == nil {
		return 1, nil
	}
	return cp.Attempt + 1, cp.Feedback
}

// maxTokens is the maxTokens of the phase's next call: raised after a reply
// cut at the token limit, else 0 (the provider's default).
func maxTokens(cp *workflow.Checkpoint) int {
	if cp == nil {
		return 0
	}
	return cp.MaxTokens
}

// retryTokens is the maxTokens persisted for the retry after resp: larger
// (workflow.RetryMaxTokens) when resp was cut at the token limit, else the
// one the phase already used.
func retryTokens(cp *workflow.Checkpoint, resp workflow.ModelResponse) int {
	if resp.Truncated {
		return workflow.RetryMaxTokens(maxTokens(cp), resp)
	}
	return maxTokens(cp)
}

// rejected is the reason of a step whose stage was rejected n times.
func rejected(stage string, n int, problems []string) string {
	return fmt.Sprintf("%s rejected %d times: %s", stage, n, strings.Join(problems, "; "))
}

// parameterized persists accepted parameters with phase execute, keeping
// the intent approval granted for the step (grant, nil when none) so the
// step executes without a second pause.
func (m *Mode) parameterized(ctx context.Context, run workflow.Run, sel workflow.Selection, params map[string]any, grant *workflow.ApprovalGrant) error {
	if sel.Action == workflow.CompleteAction {
		text, _ := params["message"].(string)
		return modes.Complete(ctx, run, text, sel.Learnings)
	}
	return run.Checkpoint(ctx, workflow.Checkpoint{Phase: workflow.PhaseExecute, Selection: &sel, Parameters: params, Approval: grant})
}
