package engine

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/twostep/twostep/workflow"
)

// Gate is the approval gate (workflow.Run.Gate), the one rule of whether
// a step waits for a person (DESIGN §9.1, §10.4):
//
//  1. A grant decided for the step (kept in its checkpoint) lets it
//     proceed at any moment, with its constraints when it is an intent
//     grant.
//  2. At the intent moment, a step of an action under the intent rule
//     pauses for an intent approval, unless a live standing intent
//     approval covers the action (Stage 2 then runs, and its call is
//     judged at the call moment). A probe (Gate.Probe) only says
//     whether it would.
//  3. At the call moment, a call the policy holds proceeds under the
//     grant of a standing approval that admits it (its use counted),
//     else pauses: for an intent approval when it is a planned step (no
//     Stage 1 selection) of an action under the intent rule, else for a
//     call approval.
//
// Without a policy every step proceeds.
func (r *roundRun) Gate(ctx context.Context, g workflow.Gate) (workflow.Verdict, error) {
	if cp := r.wf.Checkpoint; cp != nil && cp.Approval != nil {
		return r.granted(cp.Approval), nil
	}
	pol := r.e.cfg.Approvals
	if pol == nil {
		return workflow.Verdict{}, nil
	}
	switch g.Moment {
	case workflow.MomentIntent:
		if !r.needsIntent(g.Action) {
			return workflow.Verdict{}, nil
		}
		standing, err := r.hasStandingIntent(ctx, g.Action)
		if err != nil || standing {
			return workflow.Verdict{}, err
		}
		if g.Probe {
			return workflow.Verdict{Paused: true}, nil
		}
		return r.pause(ctx, g, workflow.ApprovalIntent)
	case workflow.MomentCall:
		if g.Probe {
			return workflow.Verdict{}, workflow.Errorf(workflow.KindInternal, "approval gate: a probe is only taken at the intent moment")
		}
		if needed, _ := pol.NeedsApproval(g.Action, g.Parameters); !needed {
			return workflow.Verdict{}, nil
		}
		grant, err := r.matchStanding(ctx, g)
		if err != nil || grant != nil {
			return workflow.Verdict{Grant: grant}, err
		}
		kind := workflow.ApprovalCall
		if r.needsIntent(g.Action) && r.resumeAt(g).Selection == nil {
			kind = workflow.ApprovalIntent // a planned step: its intent, parameters shown
		}
		return r.pause(ctx, g, kind)
	}
	return workflow.Verdict{}, workflow.Errorf(workflow.KindInternal, "approval gate: unknown moment %q", g.Moment)
}

// granted is the verdict of a step that proceeds under grant, a person's
// decision on it: an intent grant's constraints judge Stage 2's reply.
func (r *roundRun) granted(grant *workflow.ApprovalGrant) workflow.Verdict {
	v := workflow.Verdict{Grant: grant}
	if grant.Kind == workflow.ApprovalIntent && len(grant.Constraints) > 0 {
		v.Constraints = grant.Constraints
		v.Judge = func(params map[string]any) []string {
			return r.e.constraintProblems(grant.Constraints, params)
		}
	}
	return v
}

// needsIntent reports whether calls of action wait for an intent approval
// (the policy's rule for it is intent).
func (r *roundRun) needsIntent(action string) bool {
	pol := r.e.cfg.Approvals
	return pol != nil && action != workflow.CompleteAction && pol.NeedsIntentApproval(action)
}

// constraintProblems judges params by constraints through the policy.
func (e *Engine) constraintProblems(constraints, params map[string]any) []string {
	if len(constraints) == 0 {
		return nil
	}
	if e.cfg.Approvals == nil {
		return []string{"/: the approval policy cannot check constraints"}
	}
	return e.cfg.Approvals.ConstraintProblems(constraints, params)
}

// resumeAt is the checkpoint the step resumes from once approved: g's, or
// a copy of the current one.
func (r *roundRun) resumeAt(g workflow.Gate) workflow.Checkpoint {
	switch {
	case g.Resume != nil:
		cp := *g.Resume.Clone()
		if r.wf.Checkpoint != nil {
			cp.Failures = r.wf.Checkpoint.Failures
		}
		return cp
	case r.wf.Checkpoint != nil:
		return *r.wf.Checkpoint.Clone()
	}
	return workflow.Checkpoint{Phase: workflow.PhaseExecute}
}

// pause commits the round as awaiting an approval of kind of the step:
// status awaiting_approval and the pending approval in one commit, the
// checkpoint the step resumes from kept with where to go on after a
// rejection, the step not advanced. The run ends after it and its lease
// is released: no worker holds a paused round.
func (r *roundRun) pause(ctx context.Context, g workflow.Gate, kind workflow.ApprovalKind) (workflow.Verdict, error) {
	cp := r.resumeAt(g)
	cp.Step, cp.Approval = r.wf.Step, nil
	cp.AfterReject = g.Reject.Clone()
	if cp.AfterReject == nil {
		cp.AfterReject = &workflow.Checkpoint{Phase: workflow.PhaseSelect}
	}
	cp.AfterReject.Step = r.wf.Step + 1
	next := r.wf.Clone()
	next.Checkpoint = &cp
	next.Status = workflow.StatusAwaitingApproval
	next.PendingApproval = r.pending(g, kind)
	if err := r.commit(ctx, next, nil, nil); err != nil {
		return workflow.Verdict{}, err
	}
	r.e.observer().ApprovalRequested(g.Action)
	r.published()
	return workflow.Verdict{Paused: true}, nil
}

// pending is the approval a pause of kind for g asks a person to decide.
func (r *roundRun) pending(g workflow.Gate, kind workflow.ApprovalKind) *workflow.PendingApproval {
	now := r.e.now()
	_, effect := r.e.cfg.Approvals.NeedsApproval(g.Action, g.Parameters)
	p := &workflow.PendingApproval{
		ID: workflow.NewID(workflow.PrefixApproval), Round: r.wf.Round, Step: r.wf.Step, Action: g.Action, ActionObjective: g.Objective,
		Parameters: maps.Clone(g.Parameters), Documents: slices.Clone(g.Documents), Connection: g.Connection,
		Effect: effect, RequestedAt: now, ExpiresAt: now.Add(r.e.approvalTimeout()), Kind: kind,
	}
	if sel := g.Selection; sel != nil {
		p.ParametersContext = sel.ParametersContext
		p.Fields = slices.Clone(sel.ParametersSchema.Fields)
		if p.Fields == nil {
			p.Fields = []workflow.FieldSpec{}
		}
	}
	if p.Documents == nil {
		p.Documents = []string{}
	}
	return p
}

func (e *Engine) approvalTimeout() time.Duration {
	if e.cfg.ApprovalTimeout > 0 {
		return e.cfg.ApprovalTimeout
	}
	return DefaultApprovalTimeout
}
