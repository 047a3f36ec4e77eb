package workflow

import (
	"context"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"time"
)

// PrefixStanding is the prefix of a standing approval's id.
const PrefixStanding = "sap_"

// Standing approval scopes (DESIGN §10.4): the workflow the decision was
// taken in, or every workflow of its user.
const (
	ScopeWorkflow = "workflow"
	ScopeUser     = "user"
)

// MaxStandingApprovals bounds the standing approvals one user keeps; a
// decision that would add one more is refused (KindInvalid) until the
// user revokes some.
const MaxStandingApprovals = 200

// Remember asks a decision "approve" to keep standing: later calls of the
// same action that satisfy it run without a pause (DESIGN §10.4).
type Remember struct {
	// Scope is ScopeWorkflow or ScopeUser.
	Scope string
	// TTL, when positive, is how long the standing approval lasts.
	TTL time.Duration
}

// StandingApproval is a decision kept for later calls of one action: of
// kind intent it admits every call whose parameters satisfy Constraints
// (none: every call), of kind call every call whose parameters equal
// Parameters. GrantedBy is the person who decided it, so every call it lets
// run is traceable to them.
type StandingApproval struct {
	ID          string         `json:"id"`
	UserID      string         `json:"userId"`
	Action      string         `json:"action"`
	Kind        ApprovalKind   `json:"kind"`
	Scope       string         `json:"scope"`
	WorkflowID  string         `json:"workflowId,omitempty"`
	Constraints map[string]any `json:"constraints,omitempty"`
	Parameters  map[string]any `json:"parameters,omitempty"`
	GrantedBy   string         `json:"grantedBy"`
	GrantedAt   time.Time      `json:"grantedAt"`
	ExpiresAt   *time.Time     `json:"expiresAt,omitempty"`
	// Uses counts the calls it let run (read from the store, which
	// counts them atomically).
	Uses int64 `json:"uses"`
}

// Live reports whether the standing approval still admits calls at now.
func (s *StandingApproval) Live(now time.Time) bool {
	return s.ExpiresAt == nil || now.Before(*s.ExpiresAt)
}

// Covers reports whether the standing approval applies to a call of action
// in workflow workflowID at now, before its parameters are looked at.
func (s *StandingApproval) Covers(action, workflowID string, now time.Time) bool {
	return s.Action == action && s.Live(now) && (s.Scope == ScopeUser || s.WorkflowID == workflowID)
}

// ApprovedBy records, on the action message of a call a standing approval
// let run, which one and who granted it.
type ApprovedBy struct {
	StandingApprovalID string `json:"standingApprovalId"`
	GrantedBy          string `json:"grantedBy"`
}

// StandingStore is a Store that keeps standing approvals, under their user
// (on Redis in the user's hash slot). The engine reads them at each step
// that needs an approval, so a revocation applies from the next step on,
// on every instance.
type StandingStore interface {
	// PutStanding stores a new standing approval (Uses is ignored: a new
	// one has none). It fails with KindInvalid when the user already keeps
	// MaxStandingApprovals live ones.
	PutStanding(ctx context.Context, s StandingApproval) error
	// ListStanding returns userID's live standing approvals at now, with
	// their uses, oldest first; expired ones are left out (and may be
	// removed).
	ListStanding(ctx context.Context, userID string, now time.Time) ([]StandingApproval, error)
	// DeleteStanding removes userID's standing approval id; KindNotFound
	// when the user has none by that id.
	DeleteStanding(ctx context.Context, userID, id string) error
	// UseStanding counts one use of userID's standing approval id,
	// atomically, and returns the count; KindNotFound when it was revoked.
	UseStanding(ctx context.Context, userID, id string) (int64, error)
}

// StandingStoreOf returns the standing approval store of s: s itself when
// it is one, else that of the store it wraps (StoreWrapper), else nil.
func StandingStoreOf(s Store) StandingStore {
	for s != nil {
		if ss, ok := s.(StandingStore); ok {
			return ss
		}
		w, ok := s.(StoreWrapper)
		if !ok {
			return nil
		}
		s = w.Unwrap()
	}
	return nil
}

// CloneStanding returns a copy of s whose maps are its own.
func CloneStanding(s StandingApproval) StandingApproval {
	s.Constraints = cloneJSON(s.Constraints)
	s.Parameters = CloneParams(s.Parameters)
	if s.ExpiresAt != nil {
		t := *s.ExpiresAt
		s.ExpiresAt = &t
	}
	return s
}

// cloneJSON deep-copies decoded JSON (maps, slices, scalars).
func cloneJSON(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return maps.Clone(m)
	}
	var out map[string]any
	if json.Unmarshal(b, &out) != nil {
		return maps.Clone(m)
	}
	return out
}

// Standing lists userID's live standing approvals (GET
// /api/v1/approvals/standing); none when the store keeps none.
func (e *Engine) Standing(ctx context.Context, userID string) (_ []StandingApproval, err error) {
	defer Wrap(&err, "Standing(%q)", userID)
	if e.standing == nil {
		return []StandingApproval{}, nil
	}
	list, err := e.standing.ListStanding(ctx, userID, e.now())
	if list == nil && err == nil {
		list = []StandingApproval{}
	}
	return list, err
}

// RevokeStanding deletes userID's standing approval id: the next step that
// would have used it, on any instance, pauses instead. Another user's id
// is KindNotFound.
func (e *Engine) RevokeStanding(ctx context.Context, userID, id string) (err error) {
	defer Wrap(&err, "RevokeStanding(%q)", id)
	if e.standing == nil {
		return Errorf(KindNotFound, "standing approval %s not found", id)
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
		if s.Scope == ScopeWorkflow && s.WorkflowID == id {
			if err := e.standing.DeleteStanding(ctx, userID, s.ID); err != nil && KindOf(err) != KindNotFound {
				return err
			}
		}
	}
	return nil
}

// standingFor returns the live standing approvals of the run's user that
// cover a call of action in the run's workflow, read from the store now.
func (r *Run) standingFor(ctx context.Context, action string) ([]StandingApproval, error) {
	if r.e.standing == nil {
		return nil, nil
	}
	var list []StandingApproval
	err := r.e.retryStore(ctx, r.detach(ctx), "standing approvals", r.wf.ID, func(ctx context.Context) (err error) {
		list, err = r.e.standing.ListStanding(ctx, r.wf.UserID, r.e.now())
		return err
	})
	if err != nil {
		return nil, err
	}
	now := r.e.now()
	return slices.DeleteFunc(list, func(s StandingApproval) bool { return !s.Covers(action, r.wf.ID, now) }), nil
}

// HasStandingIntent reports whether a live standing approval of kind intent
// covers a call of action in the run's workflow: a mode then lets the step
// go on to Stage 2 without an intent pause, and the filled call runs if
// it satisfies one (else it pauses for a call approval).
func (r *Run) HasStandingIntent(ctx context.Context, action string) (bool, error) {
	list, err := r.standingFor(ctx, action)
	if err != nil {
		return false, err
	}
	for _, s := range list {
		if s.Kind == ApprovalIntent {
			return true, nil
		}
	}
	return false, nil
}

// matchStanding returns the grant of the first standing approval (oldest
// first) that admits the call, with its use counted; nil when none does.
// One revoked between the read and the count is skipped.
func (r *Run) matchStanding(ctx context.Context, action string, params map[string]any) (*ApprovalGrant, error) {
	list, err := r.standingFor(ctx, action)
	if err != nil || len(list) == 0 {
		return nil, err
	}
	for _, s := range list {
		if !r.admits(s, params) {
			continue
		}
		_, err := r.e.standing.UseStanding(ctx, r.wf.UserID, s.ID)
		if KindOf(err) == KindNotFound {
			continue
		}
		if err != nil {
			return nil, err
		}
		return &ApprovalGrant{ID: s.ID, Kind: s.Kind, Parameters: params,
			ApprovedBy: &ApprovedBy{StandingApprovalID: s.ID, GrantedBy: s.GrantedBy}}, nil
	}
	return nil, nil
}

// admits reports whether s lets a call with params run: kind intent when
// params satisfy its constraints, kind call when they equal its
// parameters (as JSON: 2 and 2.0 are equal).
func (r *Run) admits(s StandingApproval, params map[string]any) bool {
	if s.Kind == ApprovalIntent {
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
