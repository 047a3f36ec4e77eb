package workflow

import (
	"maps"
	"slices"
	"time"
)

// MessageRejected is the status of the action message of a step whose
// approval was refused (or expired): the action did not run.
const MessageRejected MessageStatus = "rejected"

// ApprovalPolicy decides which calls need a person's approval before they
// run, which steps pause for an intent approval and what the constraints
// of an intent approval admit (approval.Policy implements it from the
// YAML approvals section). The engine's approval gate (Run.Gate) is its
// one consumer.
type ApprovalPolicy interface {
	// NeedsApproval reports whether this call of the action must wait for
	// a decision, and the call's effect.
	NeedsApproval(action string, params map[string]any) (bool, Effect)
	// NeedsIntentApproval reports whether calls of action wait for an
	// intent approval (after Stage 1, before Stage 2).
	NeedsIntentApproval(action string) bool
	// ConstraintFragmentProblems returns one "constraints.<field>:
	// message" line per fragment that is not a JSON Schema that compiles.
	ConstraintFragmentProblems(constraints map[string]any) []string
	// ConstraintProblems returns one "/<field>: message" line per value of
	// params its field's constraint rejects (nil when all satisfy them).
	ConstraintProblems(constraints, params map[string]any) []string
}

// ApprovalKind says what a pending approval asks a person to judge
// (DESIGN §10.4).
type ApprovalKind string

const (
	// ApprovalCall is the approval of a filled call: the action with its
	// parameters (DESIGN §9.1). A pending approval stored without a kind
	// is one.
	ApprovalCall ApprovalKind = "call"
	// ApprovalIntent is the approval of Stage 1's decision before Stage 2
	// fills any parameter: the action, objective, references, connection,
	// parametersContext and the fields asked. The decision may narrow
	// what Stage 2 may fill with constraints.
	ApprovalIntent ApprovalKind = "intent"
)

// PendingApproval is the step a paused round waits on (DESIGN §9.1). It
// names document references and the connection label, never a secret. Of
// kind intent it has no parameters (Stage 2 has not run) but the context
// and the fields Stage 2 will be given.
type PendingApproval struct {
	ID              string         `json:"id"`
	Round           int            `json:"round"`
	Step            int            `json:"step"`
	Action          string         `json:"action"`
	ActionObjective string         `json:"actionObjective"`
	Parameters      map[string]any `json:"parameters"`
	Documents       []string       `json:"documents"`
	Connection      string         `json:"connection"`
	Effect          Effect         `json:"effect"`
	RequestedAt     time.Time      `json:"requestedAt"`
	ExpiresAt       time.Time      `json:"expiresAt"`
	// Kind is ApprovalCall or ApprovalIntent ("" in a record stored before
	// kinds existed: read it as ApprovalCall, see KindOrCall).
	Kind ApprovalKind `json:"kind,omitempty"`
	// ParametersContext and Fields, of kind intent, are what Stage 2 will
	// be given: Stage 1's parametersContext and the fields it asked for.
	ParametersContext string      `json:"parametersContext,omitempty"`
	Fields            []FieldSpec `json:"fields,omitempty"`
}

// KindOrCall is the approval's kind, ApprovalCall for one stored before
// kinds existed.
func (p *PendingApproval) KindOrCall() ApprovalKind {
	if p.Kind == "" {
		return ApprovalCall
	}
	return p.Kind
}

// Clone returns a copy whose parameters and documents are its own.
func (p *PendingApproval) Clone() *PendingApproval {
	if p == nil {
		return nil
	}
	c := *p
	c.Parameters = maps.Clone(p.Parameters)
	c.Documents = slices.Clone(p.Documents)
	c.Fields = slices.Clone(p.Fields)
	return &c
}

// ApprovalGrant is an approval decided "approve", kept in the checkpoint of
// the step it covers until the step commits: the step executes with
// Parameters (the approved, possibly edited ones) and does not pause again.
//
// Of kind intent (granted before Stage 2) Parameters is nil and Stage 2
// fills them within Constraints; the step then executes without a pause.
type ApprovalGrant struct {
	ID         string         `json:"id"`
	Parameters map[string]any `json:"parameters"`
	Kind       ApprovalKind   `json:"kind,omitempty"`
	// Constraints are the JSON Schema fragments, by field, a decision on an
	// intent approval narrowed Stage 2's parameters with.
	Constraints map[string]any `json:"constraints,omitempty"`
	// ApprovedBy is set on a grant a standing approval gave (never
	// stored: the step executes at once).
	ApprovedBy *ApprovedBy `json:"-"`
}

// Decision is a person's answer to a pending approval.
type Decision struct {
	Approve bool
	// Parameters, on approve, replace the step's parameters (validated
	// against the action's schema and the fields Stage 1 asked for).
	Parameters map[string]any
	// Comment says why; on reject the next Stage 1 sees it.
	Comment string
	// Constraints, on approving an intent, narrow what Stage 2 may fill:
	// a JSON Schema fragment per field asked or required (DESIGN §10.4).
	Constraints map[string]any
	// Remember, on approve, keeps the decision standing for later calls
	// of the action (DESIGN §10.4).
	Remember *Remember
}

// AskedFieldsChecker is implemented by a Mode whose model fills only the
// parameters a step asked for (React's Stage 2). CheckAskedFields returns
// one problem line per key of params outside the fields that may be filled
// for action after asked was asked for (nil: every key is allowed), by
// the very rule the mode applies to its model's reply
// (prompts.CheckAskedFields), which workflow cannot import (DESIGN §2).
type AskedFieldsChecker interface {
	CheckAskedFields(params map[string]any, action ActionSpec, asked []FieldSpec) []string
}
