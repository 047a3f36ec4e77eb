package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/twostep/twostep/apiv1"
	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/workflow"
)

type decisionInput struct {
	WorkflowPath
	ApprovalID string `path:"approvalId" maxLength:"64" doc:"The pending approval's id (apr_...)"`
	Prefer     string `header:"Prefer" maxLength:"200" doc:"wait=<seconds> (at most 60): answer 200 with the round's messages when the round ends or pauses again within that time"`
	Body       apiv1.DecisionBody
}

func (s *Server) registerApprovals(api huma.API) {
	huma.Register(api, huma.Operation{
		OperationID: "decideApproval", Method: http.MethodPost, Path: "/api/v1/workflows/{id}/approvals/{approvalId}",
		Summary: "Approve (optionally with edited parameters or constraints) or reject the step a paused round waits on",
		Description: "202 with the workflow, running again. 409 when the approval is not the pending one: " +
			"already decided, stopped, expired or replaced. 422 for invalid edited parameters or constraints: the approval stays pending. " +
			"An intent approval (kind intent) may be narrowed with constraints; remember keeps the decision standing (GET /api/v1/approvals/standing).",
		Tags: []string{"approvals"}, DefaultStatus: http.StatusAccepted, MaxBodyBytes: 1 << 20,
		Errors: []int{400, 401, 404, 409, 413, 422, 429},
	}, s.decideApproval)
}

func (s *Server) decideApproval(ctx context.Context, in *decisionInput) (*waitedOutput, error) {
	if err := checkWorkflowID(in.ID); err != nil {
		return nil, s.fail(ctx, "decideApproval", err)
	}
	w, err := s.Decide(ctx, UserFrom(ctx), in.ID, in.ApprovalID, in.Body)
	if err != nil {
		return nil, err
	}
	return s.answerAfter(ctx, in.Prefer, w, http.StatusAccepted), nil
}

// Decide checks a decision as the approvals route does (DecisionOf) and
// hands it to the engine: the caller-safe huma error it answers (a 422
// listing the invalid edited parameters or constraints, the approval
// still pending; a 409 when approvalID is not the pending approval ...)
// is the route's. A mounted operation (AG-UI's resume) decides through it.
func (s *Server) Decide(ctx context.Context, userID, workflowID, approvalID string, body apiv1.DecisionBody) (*workflow.Workflow, error) {
	d, err := DecisionOf(body)
	if err != nil {
		return nil, err
	}
	w, err := s.engine.Decide(ctx, userID, workflowID, approvalID, d)
	var pp *engine.ParameterProblems
	if errors.As(err, &pp) {
		return nil, parameterProblems(pp)
	}
	if err != nil {
		return nil, s.fail(ctx, "decideApproval", err)
	}
	return w, nil
}

// parameterProblems is the 422 of edited parameters or constraints the
// engine refused.
func parameterProblems(pp *engine.ParameterProblems) error {
	details := make([]error, 0, len(pp.Lines))
	for _, line := range pp.Lines {
		// "parameters.<key>: ..." (forbidden or not asked for) or a
		// schema line "/<json pointer>: ...".
		path, msg, _ := strings.Cut(line, ": ")
		loc := "body.parameters"
		if pp.Body != "" {
			loc = "body." + pp.Body
		}
		if p := strings.Trim(strings.TrimPrefix(path, "parameters."), "/"); p != "" {
			loc += "." + strings.ReplaceAll(p, "/", ".")
		}
		details = append(details, &huma.ErrorDetail{Location: loc, Message: msg})
	}
	what := "the edited parameters are invalid"
	if pp.Body == "constraints" {
		what = "the constraints are invalid"
	}
	return huma.Error422UnprocessableEntity(what+"; the approval is still pending", details...)
}
