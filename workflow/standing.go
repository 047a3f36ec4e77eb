package workflow

import (
	"context"
	"encoding/json"
	"maps"
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

// StandingApproval is a decision kept for later calls of one action,
// bound to what the reviewer saw: of kind intent it admits every call
// whose parameters satisfy Constraints (none: every call), of kind call
// every call whose parameters equal Parameters — and either only through
// Connection (the connection label the approved call used, "" for none)
// with the same Documents (its document references, in any order).
// GrantedBy is the person who decided it, so every call it lets run is
// traceable to them.
type StandingApproval struct {
	ID          string         `json:"id"`
	UserID      string         `json:"userId"`
	Action      string         `json:"action"`
	Kind        ApprovalKind   `json:"kind"`
	Scope       string         `json:"scope"`
	WorkflowID  string         `json:"workflowId,omitempty"`
	Constraints map[string]any `json:"constraints,omitempty"`
	Parameters  map[string]any `json:"parameters,omitempty"`
	Connection  string         `json:"connection,omitempty"`
	Documents   []string       `json:"documents,omitempty"`
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

// SameTarget reports whether a call through connection with the document
// references documents reaches what the standing approval was granted
// for: the same connection label (a grant kept before grants were bound
// has none, so it admits only calls without a connection) and the same
// documents, in any order.
func (s *StandingApproval) SameTarget(connection string, documents []string) bool {
	return s.Connection == connection && slices.Equal(sortedSet(s.Documents), sortedSet(documents))
}

// sortedSet is refs sorted without repeats.
func sortedSet(refs []string) []string {
	return slices.Compact(slices.Sorted(slices.Values(refs)))
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

// CloneJSON deep-copies decoded JSON (maps, slices, scalars) by a JSON
// round trip, so the copy holds what a stored value reads back as.
func CloneJSON(m map[string]any) map[string]any {
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
