package inspect

import (
	"context"

	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/workflow"
)

// Selection finds the Stage 1 selection a Stage 2 render of wf uses, and
// says where it came from (see Rendered.Source).
func (i *Inspector) Selection(ctx context.Context, wf *workflow.Workflow) (workflow.Selection, string, error) {
	msgs, err := i.store.Messages(ctx, wf.ID, 0, 0)
	if err != nil {
		return workflow.Selection{}, "", err
	}
	return i.selection(ctx, wf, msgs)
}

// selection finds the Stage 1 selection a Stage 2 render (or a Stage 2
// replay's parse) uses, most exact first:
//
//  1. the checkpoint's, when the current step is past Stage 1
//     (parameterize or execute): what the engine sends next, or sent last;
//  2. the latest accepted Stage 1 reply among the kept traces, parsed again
//     as the mode parsed it: the selection of the last step that reached
//     Stage 2;
//  3. the last action message's action, objective and learnings — partial:
//     the message does not keep parametersContext or the field list.
//
// With none of them it fails with KindConflict, saying why.
func (i *Inspector) selection(ctx context.Context, wf *workflow.Workflow, msgs []workflow.Message) (workflow.Selection, string, error) {
	if cp := wf.Checkpoint; cp != nil && cp.Selection != nil &&
		(cp.Phase == workflow.PhaseParameterize || cp.Phase == workflow.PhaseExecute) {
		return *cp.Selection, "checkpoint", nil
	}
	traces, err := i.store.Traces(ctx, wf.ID)
	if err != nil {
		return workflow.Selection{}, "", err
	}
	for n := len(traces) - 1; n >= 0; n-- {
		if sel, ok := i.acceptedSelection(wf, msgs, traces[n]); ok {
			return sel, "trace " + traces[n].ID, nil
		}
	}
	for n := len(msgs) - 1; n >= 0; n-- {
		if m := msgs[n]; m.Role == workflow.RoleAction && m.Action != "" {
			return workflow.Selection{Action: m.Action, ActionObjective: m.ActionObjective, Learnings: m.Learnings},
				"message " + m.ID + " (partial: parametersContext and the Stage 1 field list are not kept in messages)", nil
		}
	}
	return workflow.Selection{}, "", workflow.Errorf(workflow.KindConflict,
		"stage2 needs a Stage 1 selection, and this workflow has none: its step is at phase %q, no accepted Stage 1 reply is among its traces and no action message names an action; render stage1 instead",
		phaseOf(wf))
}

// stepSelection is the selection Stage 2 of the trace's step was rendered
// from: the checkpoint's when the step is the current one, else the latest
// accepted Stage 1 reply of that step recorded before it.
func (i *Inspector) stepSelection(ctx context.Context, wf *workflow.Workflow, msgs []workflow.Message, t workflow.Trace) (workflow.Selection, bool, error) {
	if cp := wf.Checkpoint; cp != nil && cp.Selection != nil && wf.Round == t.Round && wf.Step == t.Step {
		return *cp.Selection, true, nil
	}
	traces, err := i.store.Traces(ctx, wf.ID)
	if err != nil {
		return workflow.Selection{}, false, err
	}
	var sel workflow.Selection
	found := false
	for _, c := range traces {
		if c.ID == t.ID {
			break
		}
		if c.Round == t.Round && c.Step == t.Step {
			if s, ok := i.acceptedSelection(wf, msgs, c); ok {
				sel, found = s, true
			}
		}
	}
	return sel, found, nil
}

// acceptedSelection parses t's reply again when t is an accepted Stage 1
// call.
func (i *Inspector) acceptedSelection(wf *workflow.Workflow, msgs []workflow.Message, t workflow.Trace) (workflow.Selection, bool) {
	if t.Stage != workflow.StageOne || t.Error != "" || t.Response == "" {
		return workflow.Selection{}, false
	}
	res := prompts.ParseStage1(t.Response, i.stage1Env(wf, msgs))
	return res.Selection, res.Selection.Action != ""
}

func phaseOf(wf *workflow.Workflow) workflow.Phase {
	if wf.Checkpoint == nil {
		return "none (no round running)"
	}
	return wf.Checkpoint.Phase
}
