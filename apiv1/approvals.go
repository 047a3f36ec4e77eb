package apiv1

import "time"

// PendingApproval is the step a paused round waits on (DESIGN §9.1),
// decided at POST /api/v1/workflows/{id}/approvals/{approvalId}. It names
// document references and the connection label, never a secret. Of kind
// intent it has no parameters (Stage 2 has not run) but the context and
// the fields Stage 2 will be given.
type PendingApproval struct {
	ID              string         `json:"id"`
	Round           int            `json:"round"`
	Step            int            `json:"step"`
	Action          string         `json:"action"`
	ActionObjective string         `json:"actionObjective"`
	Parameters      map[string]any `json:"parameters" nullable:"true" doc:"The call's parameters; null for kind intent (Stage 2 has not run)"`
	Documents       []string       `json:"documents"`
	Connection      string         `json:"connection"`
	Effect          string         `json:"effect"`
	RequestedAt     time.Time      `json:"requestedAt"`
	ExpiresAt       time.Time      `json:"expiresAt"`
	Kind            string         `json:"kind,omitempty" enum:"call,intent" required:"true" doc:"call: approve the filled call; intent: approve Stage 1's decision before Stage 2 (docs/approvals.md)"`
	// ParametersContext and Fields, of kind intent, are what Stage 2 will
	// be given: Stage 1's parametersContext and the fields it asked for.
	ParametersContext string      `json:"parametersContext,omitempty"`
	Fields            []FieldSpec `json:"fields,omitempty"`
}

// FieldSpec is one parameter a Stage 1 selection asks Stage 2 to fill:
// its type is one of string, number, integer, boolean, enum, object, array.
type FieldSpec struct {
	Name string `json:"name"`
	Type string `json:"type"`
	// Items is an array field's element type, when Stage 1 named one.
	Items       string `json:"items,omitempty"`
	Required    bool   `json:"required"`
	Description string `json:"description,omitempty"`
}

// DecisionBody is the body of POST
// /api/v1/workflows/{id}/approvals/{approvalId}.
type DecisionBody struct {
	Decision   string         `json:"decision" enum:"approve,reject" doc:"approve runs the step; reject records it as rejected and the round goes on"`
	Parameters map[string]any `json:"parameters,omitempty" doc:"On approve: replaces the step's parameters (validated against the action's schema and the fields Stage 1 asked for)"`
	Comment    string         `json:"comment,omitempty" maxLength:"2000" doc:"Why; on reject the next Stage 1 sees it"`
	// Constraints and Remember: DESIGN §10.4, docs/approvals.md.
	Constraints map[string]map[string]any `json:"constraints,omitempty" maxProperties:"64" doc:"On approving an intent: a JSON Schema fragment per field Stage 2 may fill ({\"priority\": {\"maximum\": 2}}); Stage 2 is shown the narrowed schema and its reply must satisfy it"`
	Remember    *RememberBody             `json:"remember,omitempty" doc:"On approve: keep the decision standing, so later calls of the action that satisfy the constraints (intent) or repeat the parameters (call) run without a pause"`
}

// RememberBody asks a decision to stand for later calls (DESIGN §10.4).
type RememberBody struct {
	Scope string `json:"scope" enum:"workflow,user" doc:"workflow: later calls in this workflow; user: in every workflow of the user"`
	TTL   string `json:"ttl,omitempty" maxLength:"32" doc:"How long it stands, a duration such as 30m, 8h or 720h; none: until revoked"`
}

// StandingApprovalView is a standing approval as the API shows it (DESIGN
// §10.4): of kind intent it carries the approved constraints, of kind call
// the approved parameters; grantedBy is the person who decided it.
type StandingApprovalView struct {
	ID          string                    `json:"id"`
	Action      string                    `json:"action"`
	Kind        string                    `json:"kind" enum:"call,intent"`
	Scope       string                    `json:"scope" enum:"workflow,user"`
	WorkflowID  string                    `json:"workflowId,omitempty" doc:"Scope workflow: the workflow whose calls it admits"`
	Constraints map[string]map[string]any `json:"constraints,omitempty" doc:"Kind intent: the JSON Schema fragment each field must satisfy (none: every call)"`
	Parameters  map[string]any            `json:"parameters,omitempty" doc:"Kind call: the parameters a call must repeat"`
	Connection  string                    `json:"connection,omitempty" doc:"The connection label the approved call used: it admits calls through this connection only (none: only calls without a connection)"`
	Documents   []string                  `json:"documents,omitempty" doc:"The document references the approved call named: it admits calls naming the same ones (in any order)"`
	GrantedBy   string                    `json:"grantedBy"`
	GrantedAt   time.Time                 `json:"grantedAt"`
	ExpiresAt   *time.Time                `json:"expiresAt,omitempty"`
	Uses        int64                     `json:"uses" doc:"The calls it let run without a pause"`
}

// StandingApprovalList is the caller's standing approvals (GET
// /api/v1/approvals/standing).
type StandingApprovalList struct {
	Approvals []StandingApprovalView `json:"approvals"`
}
