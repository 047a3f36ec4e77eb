package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/twostep/twostep/workflow"
)

// DecisionBody is the body of POST /api/v1/workflows/{id}/approvals/{approvalId}.
type DecisionBody struct {
	Decision   string         `json:"decision" enum:"approve,reject" doc:"approve runs the step; reject records it as rejected and the round goes on"`
	Parameters map[string]any `json:"parameters,omitempty" doc:"On approve: replaces the step's parameters (validated against the action's schema and the fields Stage 1 asked for)"`
	Comment    string         `json:"comment,omitempty" maxLength:"2000" doc:"Why; on reject the next Stage 1 sees it"`
}

type decisionInput struct {
	WorkflowPath
	ApprovalID string `path:"approvalId" maxLength:"64" doc:"The pending approval's id (apr_...)"`
	Prefer     string `header:"Prefer" maxLength:"200" doc:"wait=<seconds> (at most 60): answer 200 with the round's messages when the round ends or pauses again within that time"`
	Body       DecisionBody
}

func (s *Server) registerApprovals(api huma.API) {
	huma.Register(api, huma.Operation{
		OperationID: "decideApproval", Method: http.MethodPost, Path: "/api/v1/workflows/{id}/approvals/{approvalId}",
		Summary: "Approve (optionally with edited parameters) or reject the step a paused round waits on",
		Description: "202 with the workflow, running again. 409 when the approval is not the pending one: " +
			"already decided, stopped, expired or replaced. 422 for invalid edited parameters: the approval stays pending.",
		Tags: []string{"approvals"}, DefaultStatus: http.StatusAccepted, MaxBodyBytes: 1 << 20,
		Errors: []int{400, 401, 404, 409, 413, 422, 429},
	}, s.decideApproval)
}

func (s *Server) decideApproval(ctx context.Context, in *decisionInput) (*waitedOutput, error) {
	if err := checkWorkflowID(in.ID); err != nil {
		return nil, s.fail(ctx, "decideApproval", err)
	}
	d := workflow.Decision{Approve: in.Body.Decision == "approve", Parameters: in.Body.Parameters, Comment: in.Body.Comment}
	if !d.Approve && in.Body.Parameters != nil {
		return nil, invalid("body.parameters", "parameters are only taken with decision approve", nil)
	}
	w, err := s.engine.Decide(ctx, UserFrom(ctx), in.ID, in.ApprovalID, d)
	var pp *workflow.ParameterProblems
	if errors.As(err, &pp) {
		details := make([]error, 0, len(pp.Lines))
		for _, line := range pp.Lines {
			// "parameters.<key>: ..." (forbidden or not asked for) or a
			// schema line "/<json pointer>: ...".
			path, msg, _ := strings.Cut(line, ": ")
			loc := "body.parameters"
			if p := strings.Trim(strings.TrimPrefix(path, "parameters."), "/"); p != "" {
				loc += "." + strings.ReplaceAll(p, "/", ".")
			}
			details = append(details, &huma.ErrorDetail{Location: loc, Message: msg})
		}
		return nil, huma.Error422UnprocessableEntity("the edited parameters are invalid; the approval is still pending", details...)
	}
	if err != nil {
		return nil, s.fail(ctx, "decideApproval", err)
	}
	return s.answerAfter(ctx, in.Prefer, w, http.StatusAccepted), nil
}
