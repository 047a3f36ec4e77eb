package engine

import (
	"context"
	"encoding/json"
	"maps"
	"strings"

	"github.com/twostep/twostep/workflow"
)

// ForkRequest asks Engine.Fork for a new workflow that goes on from step
// Step of round Round of an existing one.
type ForkRequest struct {
	Round, Step int
	// Selection, when set, is an edited Stage 1 selection (its Learnings
	// are ignored): the fork's step starts at Stage 2 with it.
	Selection *workflow.Selection
	// Parameters, when set, are edited Stage 2 parameters for Selection,
	// or for the selection the original recorded at that step: the fork's
	// step starts at execution with them (approvals still apply).
	Parameters map[string]any
}

// ForkProblems carries the lines of an edited selection or edited
// parameters that Fork refused, for a 422 with one error per line. Field
// is "selection" or "parameters".
type ForkProblems struct {
	Field string
	Lines []string
}

func (p *ForkProblems) Error() string { return p.Field + ": " + strings.Join(p.Lines, "; ") }

// Fork creates a new workflow of the same user from the messages of id
// before step req.Step of round req.Round (every message of the earlier
// rounds, and of that round its user message and the messages of the
// steps before req.Step), with copies of their documents under the
// fork's own keys: the fork shares no stored record with the original,
// which Fork only reads, so deleting either leaves the other whole. The
// copy is bounded before anything is read: the documents' sizes, as the
// messages record them, must sum to at most MaxForkBytes (else
// KindInvalid), the user's running rounds must be under the running limit
// (else KindTooMany; the commit checks it again, atomically), and the
// bytes the forks of this instance hold at once are bounded too (a fork
// waits for room; KindUnavailable when ctx ends first). The messages and
// documents keep their ids and seqs, so every reference in them (docList:<messageId>:…, docItem:<documentId>:…, a summary's
// compactedThrough) means the same in the fork. Traces and stats are not
// copied: the fork's are its own, from its first call on.
//
// The fork runs round req.Round from step req.Step: from Stage 1 without
// an edit; with req.Selection, judged as a live Stage 1 reply of the fork
// would be, from where such a reply leads (StepEditChecker.Selected:
// Stage 2, or execution when nothing is to fill); from execution with req.Parameters, judged
// as Stage 2's reply for req.Selection or, without it, for the selection
// the original recorded at that step (its checkpoint, or the accepted
// Stage 1 call's trace). The fork is committed running, under the user's
// running limit, and scheduled; its ForkedFrom names the original.
//
// A fork is new work, checked like a create: with the user's budget spent
// it is refused with a *BudgetError (KindTooMany) before anything is read,
// and its commit is refused with KindTooMany when the user already runs
// MaxRunningPerUser rounds.
//
// Another user's workflow is KindNotFound. KindInvalid: a workflow of a
// mode that is not a StepEditChecker (the action-plan mode), a round or
// step the workflow never reached, edits that are refused (a
// *ForkProblems inside), parameters for a step whose selection is no
// longer recorded.
func (e *Engine) Fork(ctx context.Context, userID, id string, req ForkRequest) (_ *workflow.Workflow, err error) {
	defer workflow.Wrap(&err, "Fork(%q)", id)
	if err := e.checkBudget(ctx, userID); err != nil {
		return nil, err
	}
	wf, err := e.Get(ctx, userID, id)
	if err != nil {
		return nil, err
	}
	checker, ok := e.modes[wf.Mode].(workflow.StepEditChecker)
	if !ok {
		return nil, workflow.Errorf(workflow.KindInvalid, "fork is for react workflows; workflow %s runs in mode %s", id, wf.Mode)
	}
	msgs, err := e.store.Messages(ctx, wf.ID, 0, 0)
	if err != nil {
		return nil, err
	}
	if err := checkForkPoint(wf, msgs, req.Round, req.Step); err != nil {
		return nil, err
	}
	kept := messagesBefore(msgs, req.Round, req.Step)
	size, err := e.forkSize(kept)
	if err != nil {
		return nil, err
	}
	if n, err := e.runningOf(ctx, wf.UserID); err != nil {
		return nil, err
	} else if n >= e.cfg.MaxRunningPerUser {
		// The commit would refuse it: say so before any document is read.
		return nil, workflow.Errorf(workflow.KindTooMany, "%d rounds are already running for this user (limit %d); wait for one to end", n, e.cfg.MaxRunningPerUser)
	}
	if err := e.forkBytes.Acquire(ctx, size); err != nil {
		return nil, workflow.WrapKind(workflow.KindUnavailable, err, "other forks are copying documents; try again")
	}
	defer e.forkBytes.Release(size)
	fork := &workflow.Workflow{
		ID: workflow.NewID(workflow.PrefixWorkflow), UserID: wf.UserID, Mode: wf.Mode, MaxSteps: wf.MaxSteps, Title: wf.Title,
		Round: req.Round, Step: req.Step, Status: workflow.StatusRunning, CreatedAt: e.now(), UpdatedAt: e.now(),
		ForkedFrom: workflow.ForkOrigin{WorkflowID: wf.ID, Round: req.Round, Step: req.Step},
	}
	cp, err := e.forkCheckpoint(ctx, checker, wf, kept, req)
	if err != nil {
		return nil, err
	}
	fork.Checkpoint = cp
	kept, docs, err := e.copyMessages(ctx, wf.ID, fork.ID, kept)
	if err != nil {
		return nil, err
	}
	fork.TraceContext.Origin = e.traceParent(ctx)
	stored, _, err := e.store.Commit(ctx, workflow.Commit{
		Workflow: fork, Messages: kept, Documents: docs, RunningLimit: e.cfg.MaxRunningPerUser,
	})
	if err != nil {
		return nil, err
	}
	e.notify(stored.ID)
	e.runner.schedule(ctx, stored.ID)
	return stored, nil
}

// checkForkPoint reports KindInvalid unless step of round is a step wf
// reached: one with a recorded message, or the step its round is at.
func checkForkPoint(wf *workflow.Workflow, msgs []workflow.Message, round, step int) error {
	if round < 1 || step < 1 {
		return workflow.Errorf(workflow.KindInvalid, "round and step start at 1, not round %d step %d", round, step)
	}
	if step > wf.MaxSteps {
		return workflow.Errorf(workflow.KindInvalid, "workflow %s runs at most %d steps a round, not step %d", wf.ID, wf.MaxSteps, step)
	}
	if round > wf.Round {
		return workflow.Errorf(workflow.KindInvalid, "workflow %s has %d round(s), not round %d", wf.ID, wf.Round, round)
	}
	if round == wf.Round && (step == wf.Step || wf.Checkpoint != nil && step == wf.Checkpoint.Step) {
		return nil
	}
	for _, m := range msgs {
		if m.Round == round && m.Step == step && m.Role != workflow.RoleUser {
			return nil
		}
	}
	return workflow.Errorf(workflow.KindInvalid, "round %d of workflow %s has no step %d", round, wf.ID, step)
}

// messagesBefore returns the messages before step of round, in seq order:
// those of earlier rounds and of round before step (its user message is
// step 0). Messages are stored in (round, step) order, so it is a prefix.
func messagesBefore(msgs []workflow.Message, round, step int) []workflow.Message {
	n := 0
	for n < len(msgs) && (msgs[n].Round < round || msgs[n].Round == round && msgs[n].Step < step) {
		n++
	}
	return msgs[:n:n]
}

// forkCheckpoint is the checkpoint the fork's step starts from, after the
// edits in req are judged against the fork's messages kept.
func (e *Engine) forkCheckpoint(ctx context.Context, checker workflow.StepEditChecker, wf *workflow.Workflow, kept []workflow.Message, req ForkRequest) (*workflow.Checkpoint, error) {
	cp := &workflow.Checkpoint{Step: req.Step, Phase: workflow.PhaseSelect}
	if req.Selection == nil && req.Parameters == nil {
		return cp, nil
	}
	reg := workflow.UserRegistry(e.registry, wf.UserID)
	conns := workflow.UserConnections(e.registry, wf.UserID)
	var sel workflow.Selection
	if req.Selection != nil {
		reply, err := selectionReply(*req.Selection)
		if err != nil {
			return nil, err
		}
		var problems []string
		if sel, problems = checker.CheckSelection(reply, reg, kept, conns); len(problems) > 0 {
			return nil, forkProblems("selection", "the edited selection is invalid", problems)
		}
	} else {
		recorded, err := e.recordedSelection(ctx, checker, wf, kept, req.Round, req.Step)
		if err != nil {
			return nil, err
		}
		sel = recorded
	}
	if req.Parameters == nil {
		next := checker.Selected(reg, sel)
		next.Step = req.Step
		return &next, nil
	}
	cp.Selection = &sel
	if problems := checker.CheckParameters(req.Parameters, sel, reg); len(problems) > 0 {
		return nil, forkProblems("parameters", "the edited parameters are invalid", problems)
	}
	cp.Phase, cp.Parameters = workflow.PhaseExecute, maps.Clone(req.Parameters)
	return cp, nil
}

func forkProblems(field, what string, lines []string) error {
	return &workflow.Error{Kind: workflow.KindInvalid, Message: what + ": " + strings.Join(lines, "; "),
		Err: &ForkProblems{Field: field, Lines: lines}}
}

// selectionReply writes sel as the Stage 1 reply a model would have
// written for it (without learnings), for StepEditChecker.CheckSelection.
func selectionReply(sel workflow.Selection) (json.RawMessage, error) {
	var conn any
	if sel.RequiredConnection != "" {
		conn = sel.RequiredConnection
	}
	docs := sel.RequiredInputDocuments
	if docs == nil {
		docs = []string{}
	}
	fields := sel.ParametersSchema.Fields
	if fields == nil {
		fields = []workflow.FieldSpec{}
	}
	b, err := json.Marshal(map[string]any{
		"action": sel.Action, "actionObjective": sel.ActionObjective, "learnings": []string{},
		"requiredInputDocuments": docs, "requiredConnection": conn,
		"parametersContext": sel.ParametersContext, "parametersSchema": map[string]any{"fields": fields},
	})
	if err != nil {
		return nil, workflow.WrapKind(workflow.KindInvalid, err, "the selection cannot be encoded")
	}
	return b, nil
}

// recordedSelection is the selection the original made at step of round:
// its checkpoint's when the round is at that step with one, else the one
// of the step's accepted Stage 1 call (its trace's parsed reply, judged
// again against kept so it means what it meant then).
func (e *Engine) recordedSelection(ctx context.Context, checker workflow.StepEditChecker, wf *workflow.Workflow, kept []workflow.Message, round, step int) (workflow.Selection, error) {
	if cp := wf.Checkpoint; wf.Round == round && cp != nil && cp.Step == step && cp.Selection != nil {
		return *cp.Clone().Selection, nil
	}
	traces, err := e.store.Traces(ctx, wf.ID)
	if err != nil {
		return workflow.Selection{}, err
	}
	for i := len(traces) - 1; i >= 0; i-- {
		t := traces[i]
		if t.Round != round || t.Step != step || t.Stage != workflow.StageOne || t.Error != "" || len(t.Parsed) == 0 {
			continue
		}
		reg := workflow.UserRegistry(e.registry, wf.UserID)
		sel, problems := checker.CheckSelection(t.Parsed, reg, kept, workflow.UserConnections(e.registry, wf.UserID))
		if len(problems) > 0 {
			return workflow.Selection{}, forkProblems("selection", "the selection recorded at that step is no longer valid; send an edited selection", problems)
		}
		return sel, nil
	}
	return workflow.Selection{}, workflow.Errorf(workflow.KindInvalid, "the selection of round %d step %d is not recorded (no accepted Stage 1 call is kept); send the selection with the parameters", round, step)
}

// copyMessages returns kept as messages of workflow to, and a copy of
// every document they carry read from workflow from, ids unchanged.
func (e *Engine) copyMessages(ctx context.Context, from, to string, kept []workflow.Message) ([]workflow.Message, []workflow.DocumentContent, error) {
	out := make([]workflow.Message, len(kept))
	var docs []workflow.DocumentContent
	seen := make(map[string]bool)
	var total int64
	for i, m := range kept {
		m.WorkflowID = to
		m.Parameters = workflow.CloneParams(m.Parameters)
		m.Learnings = append([]string(nil), m.Learnings...)
		m.Documents = append([]workflow.Document{}, m.Documents...)
		for j := range m.Documents {
			d := &m.Documents[j]
			if !seen[d.ID] {
				seen[d.ID] = true
				dc, err := e.store.DocumentContent(ctx, from, d.ID)
				if err != nil {
					return nil, nil, err
				}
				if total += int64(len(dc.Content)); total > e.cfg.MaxForkBytes {
					return nil, nil, tooBigToFork(total, e.cfg.MaxForkBytes) // a size the message understated
				}
				dc.WorkflowID = to
				docs = append(docs, dc)
			}
			d.WorkflowID = to
		}
		out[i] = m
	}
	return out, docs, nil
}

// forkSize sums the sizes of the documents kept carries (each once), as
// their messages record them, and refuses a fork whose copy would pass
// MaxForkBytes before any document is read.
func (e *Engine) forkSize(kept []workflow.Message) (int64, error) {
	seen := make(map[string]bool)
	var total int64
	for _, m := range kept {
		for _, d := range m.Documents {
			if !seen[d.ID] {
				seen[d.ID] = true
				total += max(d.Size, 0)
			}
		}
	}
	if total > e.cfg.MaxForkBytes {
		return 0, tooBigToFork(total, e.cfg.MaxForkBytes)
	}
	return total, nil
}

// tooBigToFork is the refusal of a fork that would copy total bytes of
// documents, more than limit.
func tooBigToFork(total, limit int64) error {
	return workflow.Errorf(workflow.KindInvalid,
		"the fork would copy %.1f MiB of documents, more than the %.1f MiB a fork may copy (limits.maxForkBytes); fork from a step before the large documents",
		float64(total)/(1<<20), float64(limit)/(1<<20))
}
