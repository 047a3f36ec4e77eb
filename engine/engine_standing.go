package engine

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"

	"github.com/twostep/twostep/workflow"
)

// Standing lists userID's live standing approvals (GET
// /api/v1/approvals/standing); none when the store keeps none.
func (e *Engine) Standing(ctx context.Context, userID string) (_ []workflow.StandingApproval, err error) {
	defer workflow.Wrap(&err, "Standing(%q)", userID)
	if e.standing == nil {
		return []workflow.StandingApproval{}, nil
	}
	list, err := e.standing.ListStanding(ctx, userID, e.now())
	if list == nil && err == nil {
		list = []workflow.StandingApproval{}
	}
	return list, err
}

// RevokeStanding deletes userID's standing approval id: the next step that
// would have used it, on any instance, pauses instead. Another user's id
// is KindNotFound.
func (e *Engine) RevokeStanding(ctx context.Context, userID, id string) (err error) {
	defer workflow.Wrap(&err, "RevokeStanding(%q)", id)
	if e.standing == nil {
		return workflow.Errorf(workflow.KindNotFound, "standing approval %s not found", id)
	}
	return e.standing.DeleteStanding(ctx, userID, id)
}

// forgetStanding deletes userID's standing approvals of scope workflow
// for workflow id, which was deleted: nothing it admitted is left
// listed.
func (e *Engine) forgetStanding(ctx context.Context, userID, id string) error {
	if e.standing == nil {
		return nil
	}
	list, err := e.standing.ListStanding(ctx, userID, e.now())
	if err != nil {
		return err
	}
	for _, s := range list {
		if s.Scope == workflow.ScopeWorkflow && s.WorkflowID == id {
			if err := e.standing.DeleteStanding(ctx, userID, s.ID); err != nil && workflow.KindOf(err) != workflow.KindNotFound {
				return err
			}
		}
	}
	return nil
}

// standingFor returns the live standing approvals of the run's user that
// cover a call of action in the run's workflow, read from the store now.
func (r *roundRun) standingFor(ctx context.Context, action string) ([]workflow.StandingApproval, error) {
	if r.e.standing == nil {
		return nil, nil
	}
	var list []workflow.StandingApproval
	err := r.e.retryStore(ctx, r.detach(ctx), "standing approvals", r.wf.ID, func(ctx context.Context) (err error) {
		list, err = r.e.standing.ListStanding(ctx, r.wf.UserID, r.e.now())
		return err
	})
	if err != nil {
		return nil, err
	}
	now := r.e.now()
	return slices.DeleteFunc(list, func(s workflow.StandingApproval) bool { return !s.Covers(action, r.wf.ID, now) }), nil
}

// hasStandingIntent reports whether a live standing approval of kind
// intent covers a call of action in the run's workflow: the gate then lets
// the step go on to Stage 2 without an intent pause, and the filled call
// runs if it satisfies one (else it pauses for a call approval).
func (r *roundRun) hasStandingIntent(ctx context.Context, action string) (bool, error) {
	list, err := r.standingFor(ctx, action)
	if err != nil {
		return false, err
	}
	for _, s := range list {
		if s.Kind == workflow.ApprovalIntent {
			return true, nil
		}
	}
	return false, nil
}

// matchStanding returns the grant of the first standing approval (oldest
// first) that admits the call — its action, connection and document
// references as granted (SameTarget), its parameters (admits) — with its
// use counted; nil when none does. One revoked between the read and the
// count is skipped.
func (r *roundRun) matchStanding(ctx context.Context, call workflow.Gate) (*workflow.ApprovalGrant, error) {
	list, err := r.standingFor(ctx, call.Action)
	if err != nil || len(list) == 0 {
		return nil, err
	}
	params := call.Parameters
	for _, s := range list {
		if !s.SameTarget(call.Connection, call.Documents) || !r.admits(s, params) {
			continue
		}
		_, err := r.e.standing.UseStanding(ctx, r.wf.UserID, s.ID)
		if workflow.KindOf(err) == workflow.KindNotFound {
			continue
		}
		if err != nil {
			return nil, err
		}
		return &workflow.ApprovalGrant{ID: s.ID, Kind: s.Kind, Parameters: params,
			ApprovedBy: &workflow.ApprovedBy{StandingApprovalID: s.ID, GrantedBy: s.GrantedBy}}, nil
	}
	return nil, nil
}

// admits reports whether s lets a call with params run: kind intent when
// params satisfy its constraints, kind call when they equal its
// parameters (as JSON: 2 and 2.0 are equal).
func (r *roundRun) admits(s workflow.StandingApproval, params map[string]any) bool {
	if s.Kind == workflow.ApprovalIntent {
		return len(r.e.constraintProblems(s.Constraints, params)) == 0
	}
	return sameJSON(s.Parameters, params)
}

// sameJSON reports whether a and b encode to the same JSON value.
func sameJSON(a, b map[string]any) bool {
	norm := func(m map[string]any) any {
		raw, err := json.Marshal(m)
		if err != nil {
			return nil
		}
		var v any
		if json.Unmarshal(raw, &v) != nil {
			return nil
		}
		return v
	}
	na, nb := norm(a), norm(b)
	return na != nil && reflect.DeepEqual(na, nb)
}
