package httpapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/twostep/twostep/apiv1"
)

type standingListOutput struct {
	Body apiv1.StandingApprovalList
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
	out.Body.Approvals = make([]apiv1.StandingApprovalView, 0, len(list))
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
