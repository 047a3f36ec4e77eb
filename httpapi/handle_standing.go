package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/twostep/twostep/workflow"
)

// StandingApprovalView is a standing approval as the API shows it (DESIGN
// §10.4): of kind intent it carries the approved constraints, of kind call
// the approved parameters; grantedBy is the person who decided it.
type StandingApprovalView struct {
	ID          string                    `json:"id"`
	Action      string                    `json:"action"`
	Kind        workflow.ApprovalKind     `json:"kind" enum:"call,intent"`
	Scope       string                    `json:"scope" enum:"workflow,user"`
	WorkflowID  string                    `json:"workflowId,omitempty" doc:"Scope workflow: the workflow whose calls it admits"`
	Constraints map[string]map[string]any `json:"constraints,omitempty" doc:"Kind intent: the JSON Schema fragment each field must satisfy (none: every call)"`
	Parameters  map[string]any            `json:"parameters,omitempty" doc:"Kind call: the parameters a call must repeat"`
	GrantedBy   string                    `json:"grantedBy"`
	GrantedAt   time.Time                 `json:"grantedAt"`
	ExpiresAt   *time.Time                `json:"expiresAt,omitempty"`
	Uses        int64                     `json:"uses" doc:"The calls it let run without a pause"`
}

type standingListOutput struct {
	Body struct {
		Approvals []StandingApprovalView `json:"approvals"`
	}
}

type standingIDInput struct {
	ID string `path:"id" maxLength:"64" doc:"The standing approval's id (sap_...)"`
}

func (s *Server) registerStanding(api huma.API) {
	huma.Register(api, huma.Operation{
		OperationID: "listStandingApprovals", Method: http.MethodGet, Path: "/api/v1/approvals/standing",
		Summary:     "List the caller's standing approvals",
		Description: "Decisions kept with remember: later calls they admit run without a pause, each recorded with approvedBy on its action message.",
		Tags:        []string{"approvals"}, Errors: []int{401},
	}, s.listStanding)
	huma.Register(api, huma.Operation{
		OperationID: "revokeStandingApproval", Method: http.MethodDelete, Path: "/api/v1/approvals/standing/{id}",
		Summary:     "Revoke a standing approval",
		Description: "The next call it would have admitted, on any instance, pauses for a person instead.",
		Tags:        []string{"approvals"}, DefaultStatus: http.StatusNoContent, Errors: []int{401, 404},
	}, s.revokeStanding)
}

func (s *Server) listStanding(ctx context.Context, _ *struct{}) (*standingListOutput, error) {
	list, err := s.engine.Standing(ctx, UserFrom(ctx))
	if err != nil {
		return nil, s.fail(ctx, "listStandingApprovals", err)
	}
	out := &standingListOutput{}
	out.Body.Approvals = make([]StandingApprovalView, 0, len(list))
	for _, a := range list {
		out.Body.Approvals = append(out.Body.Approvals, viewStanding(a))
	}
	return out, nil
}

func (s *Server) revokeStanding(ctx context.Context, in *standingIDInput) (*struct{}, error) {
	if err := s.engine.RevokeStanding(ctx, UserFrom(ctx), in.ID); err != nil {
		return nil, s.fail(ctx, "revokeStandingApproval", err)
	}
	return nil, nil
}

func viewStanding(a workflow.StandingApproval) StandingApprovalView {
	v := StandingApprovalView{
		ID: a.ID, Action: a.Action, Kind: a.Kind, Scope: a.Scope, WorkflowID: a.WorkflowID, Parameters: a.Parameters,
		GrantedBy: a.GrantedBy, GrantedAt: a.GrantedAt, ExpiresAt: a.ExpiresAt, Uses: a.Uses,
	}
	if a.Kind == workflow.ApprovalIntent {
		v.Constraints = map[string]map[string]any{}
		for k, c := range a.Constraints {
			frag, _ := c.(map[string]any)
			v.Constraints[k] = frag
		}
	}
	return v
}

// viewPending is a pending approval as the API and the approval event show
// it: a copy whose lists are never null, whose kind is call when it was
// stored before kinds existed, and whose parameters are null only for an
// intent (Stage 2 has not filled them; {} for a call with none).
func viewPending(p *workflow.PendingApproval) *workflow.PendingApproval {
	c := p.Clone()
	if c == nil {
		return nil
	}
	c.Kind = c.KindOrCall()
	c.Documents = nonNil(c.Documents)
	if c.Parameters == nil && c.Kind == workflow.ApprovalCall {
		c.Parameters = map[string]any{}
	}
	return c
}
