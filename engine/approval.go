package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/twostep/twostep/textclip"
	"github.com/twostep/twostep/workflow"
)

// DefaultApprovalTimeout is how long an approval waits for a decision when
// Config.ApprovalTimeout is 0 (DESIGN §9.1).
const DefaultApprovalTimeout = 24 * time.Hour

// ApprovalObserver is the part of an Observer that counts approvals:
// requested, and decided approved, rejected or expired with the time the
// decision took.
type ApprovalObserver interface {
	ApprovalRequested(action string)
	ApprovalDecided(outcome string, wait time.Duration)
}

// Decide applies a person's decision to the pending approval approvalID
// of userID's workflow id, exactly once: approve makes the round run again
// and the step execute (with the edited parameters, when given); reject
// records the step as rejected, with the comment, and the round goes on.
// Another user's workflow is KindNotFound; no pending approval, another
// approval id or an expired one is KindConflict (an expired one is then
// rejected with comment "expired"); invalid edited parameters are
// KindInvalid, one "path: message" line each, and the approval stays
// pending.
func (e *Engine) Decide(ctx context.Context, userID, id, approvalID string, d workflow.Decision) (_ *workflow.Workflow, err error) {
	defer workflow.Wrap(&err, "Decide(%q)", id)
	wf, err := e.Get(ctx, userID, id)
	if err != nil {
		return nil, err
	}
	p := wf.PendingApproval
	switch {
	case wf.Status != workflow.StatusAwaitingApproval || p == nil:
		return nil, workflow.Errorf(workflow.KindConflict, "workflow %s has no pending approval (status %s): it was decided, stopped or expired", id, wf.Status)
	case p.ID != approvalID:
		return nil, workflow.Errorf(workflow.KindConflict, "approval %q is not the pending one: it was already decided or replaced", approvalID)
	case !e.now().Before(p.ExpiresAt):
		if _, err := e.expire(ctx, wf); err != nil && workflow.KindOf(err) != workflow.KindConflict {
			return nil, err
		}
		return nil, workflow.Errorf(workflow.KindConflict, "approval %s expired at %s and was rejected", approvalID, p.ExpiresAt.Format(time.RFC3339))
	}
	if !d.Approve {
		if d.Constraints != nil || d.Remember != nil || d.Parameters != nil {
			return nil, workflow.Errorf(workflow.KindInvalid, "parameters, constraints and remember are only taken with decision approve")
		}
		return e.reject(ctx, wf, "rejected", strings.TrimSpace(d.Comment))
	}
	grant, err := e.grantOf(wf, d)
	if err != nil {
		return nil, err
	}
	standing, err := e.remember(ctx, userID, wf, grant, d.Remember)
	if err != nil {
		return nil, err
	}
	next := wf.Clone()
	next.Status, next.PendingApproval, next.UpdatedAt = workflow.StatusRunning, nil, e.now()
	next.Checkpoint.Approval = grant
	next.Checkpoint.AfterReject = nil
	stored, err := e.commitAndSchedule(ctx, next, wf.Version, nil, nil)
	if err != nil {
		if standing != "" {
			// The decision did not apply: neither does what it would keep.
			_ = e.standing.DeleteStanding(context.WithoutCancel(ctx), userID, standing)
		}
		return nil, err
	}
	e.approvalDecided("approved", p)
	return stored, nil
}

// grantOf checks an "approve" decision on wf's pending approval and
// returns the grant it makes: edited parameters are judged as the step's
// own model reply is (checkEdit); constraints are taken for an intent
// only, must compile and name only fields Stage 2 may fill, and a planned
// step's parameters must satisfy them. Every problem is KindInvalid with
// its lines, and the approval stays pending.
func (e *Engine) grantOf(wf *workflow.Workflow, d workflow.Decision) (*workflow.ApprovalGrant, error) {
	p := wf.PendingApproval
	kind := p.KindOrCall()
	params := p.Parameters
	if d.Parameters != nil {
		if kind == workflow.ApprovalIntent && p.Parameters == nil {
			return nil, &workflow.Error{Kind: workflow.KindInvalid, Message: "an intent approval has no parameters to edit yet: narrow them with constraints",
				Err: &ParameterProblems{Lines: []string{"/: Stage 2 has not filled the parameters; narrow them with constraints"}}}
		}
		if problems := e.checkEdit(wf, p.Action, d.Parameters); len(problems) > 0 {
			return nil, &workflow.Error{Kind: workflow.KindInvalid, Message: "the edited parameters are invalid: " + strings.Join(problems, "; "),
				Err: &ParameterProblems{Lines: problems}}
		}
		params = d.Parameters
	}
	grant := &workflow.ApprovalGrant{ID: p.ID, Kind: kind, Parameters: maps.Clone(params)}
	if d.Constraints == nil {
		return grant, nil
	}
	if kind != workflow.ApprovalIntent {
		return nil, &workflow.Error{Kind: workflow.KindInvalid, Message: "constraints are only taken on an intent approval",
			Err: &ParameterProblems{Body: "constraints", Lines: []string{"/: constraints are only taken on an intent approval; edit the parameters instead"}}}
	}
	problems := e.constraintFieldProblems(wf, p.Action, d.Constraints)
	if len(problems) == 0 && params != nil {
		for _, line := range e.constraintProblems(d.Constraints, params) {
			problems = append(problems, "parameters"+line+" (the planned parameters break the constraint)")
		}
	}
	if len(problems) > 0 {
		return nil, &workflow.Error{Kind: workflow.KindInvalid, Message: "the constraints are invalid: " + strings.Join(problems, "; "),
			Err: &ParameterProblems{Body: "constraints", Lines: problems}}
	}
	grant.Constraints = workflow.CloneJSON(d.Constraints)
	return grant, nil
}

// constraintFieldProblems returns a "<field>: message" line per
// constraint that is not an object, does not compile or names a field
// Stage 2 may not fill: for a step Stage 1 chose, the fields it asked for
// and the action's required ones; for a planned step, the action's
// parameters.
func (e *Engine) constraintFieldProblems(wf *workflow.Workflow, action string, constraints map[string]any) []string {
	pol := e.cfg.Approvals
	if pol == nil {
		return []string{"/: the approval policy cannot check constraints"}
	}
	spec, _ := e.registry.Action(action)
	schema, _ := workflow.ReadActionSchema(spec.Parameters) // unreadable: no field may be constrained
	props, required := schema.Names(), schema.Required
	allowed := map[string]bool{}
	if cp := wf.Checkpoint; cp != nil && cp.Selection != nil {
		for _, f := range cp.Selection.ParametersSchema.Fields {
			allowed[f.Name] = true
		}
		for _, n := range required {
			allowed[n] = true
		}
	} else {
		for _, n := range props {
			allowed[n] = true
		}
	}
	var problems []string
	for _, name := range slices.Sorted(maps.Keys(constraints)) {
		if !allowed[name] {
			problems = append(problems, fmt.Sprintf("%s: not a field this step fills (constraints may name %s)", name, strings.Join(slices.Sorted(maps.Keys(allowed)), ", ")))
		}
	}
	for _, line := range pol.ConstraintFragmentProblems(constraints) {
		problems = append(problems, textclip.Clip(line, workflow.MaxProblemLine))
	}
	return problems
}

// remember stores the standing approval an "approve" decision asks for
// (none when r is nil) and returns its id: of kind intent it keeps the
// constraints, of kind call the approved parameters.
func (e *Engine) remember(ctx context.Context, userID string, wf *workflow.Workflow, g *workflow.ApprovalGrant, r *workflow.Remember) (string, error) {
	if r == nil {
		return "", nil
	}
	if r.Scope != workflow.ScopeWorkflow && r.Scope != workflow.ScopeUser {
		return "", workflow.Errorf(workflow.KindInvalid, "remember.scope %q must be workflow or user", r.Scope)
	}
	if r.TTL < 0 {
		return "", workflow.Errorf(workflow.KindInvalid, "remember.ttl must not be negative")
	}
	if e.standing == nil {
		return "", workflow.Errorf(workflow.KindInvalid, "this gateway's store keeps no standing approvals")
	}
	now := e.now()
	s := workflow.StandingApproval{
		ID: workflow.NewID(workflow.PrefixStanding), UserID: wf.UserID, Action: wf.PendingApproval.Action, Kind: g.Kind, Scope: r.Scope,
		Connection: wf.PendingApproval.Connection, Documents: slices.Clone(wf.PendingApproval.Documents),
		GrantedBy: userID, GrantedAt: now,
	}
	if r.Scope == workflow.ScopeWorkflow {
		s.WorkflowID = wf.ID
	}
	if r.TTL > 0 {
		t := now.Add(r.TTL)
		s.ExpiresAt = &t
	}
	if g.Kind == workflow.ApprovalIntent {
		s.Constraints = workflow.CloneJSON(g.Constraints)
		if s.Constraints == nil {
			s.Constraints = map[string]any{}
		}
	} else {
		s.Parameters = workflow.CloneParams(g.Parameters)
		if s.Parameters == nil {
			s.Parameters = map[string]any{}
		}
	}
	if err := e.standing.PutStanding(ctx, s); err != nil {
		return "", err
	}
	return s.ID, nil
}

// ParameterProblems carries the "path: message" lines of invalid edited
// parameters (or constraints), for a 422 with one error per line.
type ParameterProblems struct {
	// Body names the decision's member the lines are about: "" for
	// parameters, "constraints" for constraints.
	Body  string
	Lines []string
}

func (p *ParameterProblems) Error() string { return strings.Join(p.Lines, "; ") }

// checkEdit judges a person's edited parameters as the step's own model
// reply is judged (prompts.ParseStage2), with the same lines in the same
// order: forbidden keys, then — for a step whose Stage 1 asked for fields,
// in a mode that is an AskedFieldsChecker — keys outside the fields that
// may be filled, then the action's schema.
func (e *Engine) checkEdit(wf *workflow.Workflow, action string, params map[string]any) []string {
	problems := workflow.ForbiddenKeyProblems(params)
	if cp := wf.Checkpoint; cp != nil && cp.Selection != nil {
		checker, isChecker := e.modes[wf.Mode].(workflow.AskedFieldsChecker)
		if spec, ok := e.registry.Action(action); ok && isChecker {
			for _, line := range checker.CheckAskedFields(params, spec, cp.Selection.ParametersSchema.Fields) {
				problems = append(problems, textclip.Clip(line, workflow.MaxProblemLine))
			}
		}
	}
	for _, line := range e.registry.ValidateParameters(action, params) {
		problems = append(problems, textclip.Clip(line, workflow.MaxProblemLine))
	}
	return problems
}

// reject records the pending step as rejected (an action message with
// status rejected whose summary says so and gives the comment), goes on
// from the checkpoint the gate's pause saved for the step after it and
// makes the round run again.
func (e *Engine) reject(ctx context.Context, wf *workflow.Workflow, outcome, comment string) (*workflow.Workflow, error) {
	p := wf.PendingApproval
	summary := fmt.Sprintf("%s was not run: the approval was %s", p.Action, outcome)
	if outcome == "rejected" {
		summary = fmt.Sprintf("%s was not run: a person rejected it", p.Action)
	}
	if comment != "" {
		summary += "; comment: " + comment
	}
	msg := workflow.Message{
		ID: workflow.NewID(workflow.PrefixMessage), WorkflowID: wf.ID, Round: p.Round, Step: p.Step, Role: workflow.RoleAction,
		Text: summary, Action: p.Action, ActionObjective: p.ActionObjective, Parameters: maps.Clone(p.Parameters),
		Status: workflow.MessageRejected, Documents: []workflow.Document{}, Summary: summary, CreatedAt: e.now(),
	}
	next := wf.Clone()
	upgradeCheckpoint(next)
	after := workflow.Checkpoint{Step: wf.Step + 1, Phase: workflow.PhaseSelect}
	if cp := next.Checkpoint; cp != nil {
		if cp.AfterReject != nil {
			after = *cp.AfterReject
		}
		after.Failures = cp.Failures
	}
	next.Checkpoint = &after
	next.Step = after.Step
	next.Status, next.PendingApproval, next.UpdatedAt = workflow.StatusRunning, nil, e.now()
	stored, err := e.commitAndSchedule(ctx, next, wf.Version, []workflow.Message{msg}, nil)
	if err != nil {
		return nil, err
	}
	e.approvalDecided(outcome, p)
	return stored, nil
}

// expire rejects wf's pending approval with comment "expired".
func (e *Engine) expire(ctx context.Context, wf *workflow.Workflow) (*workflow.Workflow, error) {
	return e.reject(ctx, wf, "expired", "expired")
}

func (e *Engine) approvalDecided(outcome string, p *workflow.PendingApproval) {
	e.observer().ApprovalDecided(outcome, e.now().Sub(p.RequestedAt))
}
