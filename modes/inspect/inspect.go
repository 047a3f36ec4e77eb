// Package inspect renders and parses a workflow's stage prompts the way the
// modes do, without a model call and without changing anything: render a
// stage (stage1, stage2, plan; with an optional template override and
// feedback), find the Stage 1 selection a Stage 2 prompt is rendered from,
// and give a recorded call's replay its request shape and the parse of its
// reply. The admin render and replay routes (package httpapi) only decode,
// call an Inspector and map its errors.
package inspect

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/twostep/twostep/placeholders"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/templates"
	"github.com/twostep/twostep/workflow"
)

// Reader is what an inspection reads; a workflow.Store is one. It is only
// read.
type Reader interface {
	GetWorkflow(ctx context.Context, id string) (*workflow.Workflow, error)
	Messages(ctx context.Context, workflowID string, afterSeq int64, limit int) ([]workflow.Message, error)
	Traces(ctx context.Context, workflowID string) ([]workflow.Trace, error)
}

// Options configures an Inspector; Reader, Registry and Prompts are
// required.
type Options struct {
	Reader Reader
	// Registry is the registry the engine runs with.
	Registry workflow.Registry
	// Prompts must be the builder the modes render with, so a render is
	// the exact prompt the engine would send.
	Prompts *prompts.Builder
	// Offered selects the actions the plan prompt offers for a round's
	// user prompt (actionplan.Mode.Offered); nil offers every action.
	Offered func(prompt string, all []workflow.ActionSpec) []workflow.ActionSpec
	// Model is the engine's model, asked which output mode it plans for a
	// stage call (workflow.PlannedOutput), so a render leaves out the
	// reply's shape when the call would give it natively; nil renders the
	// shape (text mode).
	Model workflow.Model
}

// Inspector renders and parses prompts as the modes do. It is safe for
// concurrent use.
type Inspector struct {
	store    Reader
	registry workflow.Registry
	prompts  *prompts.Builder
	offered  func(prompt string, all []workflow.ActionSpec) []workflow.ActionSpec
	model    workflow.Model
}

// New returns an Inspector over opts.
func New(opts Options) *Inspector {
	return &Inspector{store: opts.Reader, registry: opts.Registry, prompts: opts.Prompts, offered: opts.Offered, model: opts.Model}
}

// output is the template output of a stage call with schema out, as the
// modes pick it: native when the model plans a native mode for the call.
func (i *Inspector) output(stage workflow.Stage, out *workflow.OutputSchema) templates.Output {
	if i.model == nil {
		return templates.TextOutput
	}
	mode := workflow.PlannedOutput(i.model, workflow.ModelRequest{Stage: stage, JSON: prompts.ObjectReply(stage), Output: out})
	if mode.Native() {
		return templates.NativeOutput
	}
	return templates.TextOutput
}

// Template parses source as a template override of stage: with the stage's
// name, so the stage's key rules apply (Stage 2 can never be given the
// history).
func Template(stage workflow.Stage, source string) (templates.Template, error) {
	return templates.Parse(string(stage), source)
}

// Rendered is a fully rendered prompt: the bytes the engine would send
// for the workflow's current state, and the text of every placeholder.
type Rendered struct {
	Stage        workflow.Stage
	Template     string
	Prompt       []workflow.PromptMessage
	Placeholders map[string]string
	// Selection and Source say which Stage 1 selection a stage2 render
	// used (see Selection).
	Selection *workflow.Selection
	Source    string
}

// Render renders stage for wf exactly as the modes do: Stage 1 and plan
// from the workflow's messages, every action its user is offered (the
// plan's Offered subset) and the user's connections; Stage 2 from a Stage 1
// selection only. override (nil: the gateway's template) and feedback (the
// problem lines of a rejected attempt) are rendered as a retry would.
func (i *Inspector) Render(ctx context.Context, wf *workflow.Workflow, stage workflow.Stage,
	override *templates.Template, feedback []string) (Rendered, error) {
	msgs, err := i.store.Messages(ctx, wf.ID, 0, 0)
	if err != nil {
		return Rendered{}, err
	}
	res := Rendered{Stage: stage}
	var rendered prompts.Rendered
	var values map[string]string
	fb := prompts.Feedback(feedback)
	switch stage {
	case workflow.StageOne, workflow.StagePlan:
		in := prompts.Stage1Input{
			Workflow: wf, Messages: msgs, Actions: i.userRegistry(wf).Actions(),
			Connections: workflow.UserConnections(i.registry, wf.UserID), Feedback: fb, Template: override,
		}
		if stage == workflow.StageOne {
			out := i.prompts.Stage1Output(in.Actions, in.Connections)
			in.Output = i.output(stage, &out)
			rendered, err = i.prompts.Stage1(in)
		} else {
			if i.offered != nil {
				in.Actions = i.offered(placeholders.UserPromptText(msgs, wf.Round), in.Actions)
			}
			rendered, err = i.prompts.Plan(in)
		}
		if stage == workflow.StageOne {
			values = i.prompts.Stage1Values(in)
		} else {
			values = i.prompts.PlanValues(in)
		}
	case workflow.StageTwo:
		var sel workflow.Selection
		sel, res.Source, err = i.selection(ctx, wf, msgs)
		if err != nil {
			return res, err
		}
		spec, ok := i.userRegistry(wf).Action(sel.Action)
		if !ok {
			return res, workflow.Errorf(workflow.KindConflict,
				"stage2 cannot be rendered: the selected action %q is no longer registered", sel.Action)
		}
		in := prompts.Stage2Input{Selection: sel, Action: spec, Feedback: fb, Template: override}
		if out, oerr := i.prompts.Stage2Output(in); oerr == nil {
			in.Output = i.output(stage, &out.Output)
		}
		if rendered, err = i.prompts.Stage2(in); err == nil {
			values, err = i.prompts.Stage2Values(in)
		}
		res.Selection = &sel
	default:
		return res, workflow.Errorf(workflow.KindInvalid, "stage %q cannot be rendered: use stage1, stage2 or plan", stage)
	}
	if err != nil {
		return res, err
	}
	res.Template, res.Prompt, res.Placeholders = rendered.Template, rendered.Messages, values
	return res, nil
}

// Call is how a replay of a recorded model call asks for its reply: as the
// engine would send the trace's stage call now.
type Call struct {
	// JSON asks for a JSON object reply (Stage 1 and Stage 2).
	JSON bool
	// Output is the stage's native output schema; nil asks for JSON (or
	// text) only.
	Output *workflow.OutputSchema
	// fromNative maps a reply in a native output mode back to the JSON the
	// stage's parse reads; nil when no mapping applies.
	fromNative func(string) string
}

// Reply returns the text the stage's parse reads from a reply answered in
// mode: a native reply mapped back, any other as is.
func (c Call) Reply(text string, mode workflow.OutputMode) string {
	if c.fromNative != nil && mode.Native() {
		return c.fromNative(text)
	}
	return text
}

// ReplayCall returns the request shape of a replay of t: JSON mode for the
// stages that answer one JSON object, and the output schema the engine
// would send with t's stage call now (Stage 1: the registered actions and
// the user's connections; Stage 2: the step's selection cut from its
// action) with its reply mapping. Other stages, or a step whose selection
// or action is no longer known, get no schema (JSON only); a store error
// does too, and surfaces in ParseReply.
func (i *Inspector) ReplayCall(ctx context.Context, t workflow.Trace) Call {
	c := Call{JSON: prompts.ObjectReply(t.Stage)}
	if t.Stage != workflow.StageOne && t.Stage != workflow.StageTwo {
		return c
	}
	wf, err := i.store.GetWorkflow(ctx, t.WorkflowID)
	if err != nil {
		return c
	}
	if t.Stage == workflow.StageOne {
		out := i.prompts.Stage1Output(i.userRegistry(wf).Actions(), workflow.UserConnections(i.registry, wf.UserID))
		c.Output = &out
		return c
	}
	msgs, err := i.store.Messages(ctx, wf.ID, 0, 0)
	if err != nil {
		return c
	}
	sel, ok, err := i.stepSelection(ctx, wf, msgs, t)
	if err != nil || !ok {
		return c
	}
	spec, known := i.userRegistry(wf).Action(sel.Action)
	if !known {
		return c
	}
	s2, err := i.prompts.Stage2Output(prompts.Stage2Input{Selection: sel, Action: spec})
	if err != nil {
		return c
	}
	c.Output, c.fromNative = &s2.Output, s2.FromNative
	return c
}

// Parsed is a reply parsed as its trace's stage parses it.
type Parsed struct {
	// Parsed is the extracted JSON; nil when none was found.
	Parsed json.RawMessage
	// Error holds the rejection lines; empty when the reply is accepted.
	Error string
	// Note says what the parse could not check.
	Note string
	// Ungrounded are the paths of a Stage 2 reply's values found nowhere
	// in what Stage 2 was shown (prompts.Ungrounded), as its trace would
	// list them; a rejection for them (stage2.requireGrounded) is the
	// engine's, not part of Error.
	Ungrounded []string
}

// ParseReply parses reply (mapped back with Call.Reply) as t's stage is
// parsed, against the workflow as it is now: its messages, the user's
// connections, the registry. Only store errors are returned.
func (i *Inspector) ParseReply(ctx context.Context, t workflow.Trace, reply string) (Parsed, error) {
	var out Parsed
	wf, err := i.store.GetWorkflow(ctx, t.WorkflowID)
	if err != nil {
		return out, err
	}
	msgs, err := i.store.Messages(ctx, wf.ID, 0, 0)
	if err != nil {
		return out, err
	}
	switch t.Stage {
	case workflow.StageAction:
		// An action's own model call (ai.process) answers free text.
		out.Note = "an action's model call answers free text; nothing to parse"
		return out, nil
	case workflow.StageOne:
		res := prompts.ParseStage1(reply, i.stage1Env(wf, msgs))
		out.Parsed, out.Error = res.Parsed, strings.Join(res.Problems, "\n")
		return out, nil
	case workflow.StageTwo:
		sel, ok, err := i.stepSelection(ctx, wf, msgs, t)
		if err != nil {
			return out, err
		}
		reg := i.userRegistry(wf)
		if spec, known := reg.Action(sel.Action); ok && known {
			res := i.prompts.ParseStage2(reply, spec, sel.ParametersSchema.Fields, reg)
			out.Parsed, out.Error = res.Parsed, strings.Join(res.Problems, "\n")
			out.Ungrounded = prompts.Ungrounded(res.Parameters, prompts.Stage2Grounding(sel, spec))
			return out, nil
		}
		out.Note = "the step's Stage 1 selection is no longer known, so the parameters were not validated against the action's schema"
	default:
		out.Note = "the reply was only extracted as JSON; plan steps are validated by the action-plan mode when it runs"
	}
	raw, err := prompts.ExtractJSON(reply)
	if err != nil {
		out.Error = workflow.PublicMessage(err)
		return out, nil
	}
	out.Parsed = raw
	return out, nil
}

// userRegistry is the registry as wf's user sees it, as the engine runs
// their rounds: another user's own actions (a per-user MCP server's tools)
// are neither offered, nor accepted, nor validated against.
func (i *Inspector) userRegistry(wf *workflow.Workflow) workflow.Registry {
	return workflow.UserRegistry(i.registry, wf.UserID)
}

func (i *Inspector) stage1Env(wf *workflow.Workflow, msgs []workflow.Message) prompts.Stage1Env {
	return prompts.Stage1Env{Registry: i.userRegistry(wf), Messages: msgs, Connections: workflow.UserConnections(i.registry, wf.UserID)}
}
