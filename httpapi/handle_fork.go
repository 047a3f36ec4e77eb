package httpapi

import (
	"context"
	"errors"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/twostep/twostep/apiv1"
	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/workflow"
)

type forkInput struct {
	WorkflowPath
	Body apiv1.ForkBody
}

type forkOutput struct {
	Location string `header:"Location" doc:"The fork's URL"`
	Body     apiv1.WorkflowView
}

func (s *Server) registerFork(api huma.API) {
	huma.Register(api, huma.Operation{
		OperationID: "forkWorkflow", Method: http.MethodPost, Path: "/api/v1/workflows/{id}/fork",
		Summary: "Fork a workflow at a step into a new workflow that runs from there",
		Description: "201 with the new workflow, running: it holds copies of the messages (and their documents) " +
			"before that step and runs the step again — from Stage 1, from Stage 2 with an edited selection, or " +
			"at execution with edited parameters. The original is not changed. 422 for a round or step the " +
			"workflow never reached, an action-plan workflow, or an edit a live step would refuse (one error per problem).",
		Tags: []string{"workflows"}, DefaultStatus: http.StatusCreated, MaxBodyBytes: 1 << 20,
		Errors: []int{400, 401, 404, 413, 422, 429},
	}, s.forkWorkflow)
}

func (s *Server) forkWorkflow(ctx context.Context, in *forkInput) (*forkOutput, error) {
	if err := checkWorkflowID(in.ID); err != nil {
		return nil, s.fail(ctx, "forkWorkflow", err)
	}
	req := engine.ForkRequest{Round: in.Body.Round, Step: in.Body.Step, Parameters: in.Body.Parameters}
	if sel := in.Body.Selection; sel != nil {
		fields := make([]workflow.FieldSpec, len(sel.ParametersSchema.Fields))
		for i, f := range sel.ParametersSchema.Fields {
			fields[i] = workflow.FieldSpec{Name: f.Name, Type: f.Type, Items: f.Items, Required: f.Required, Description: f.Description}
		}
		req.Selection = &workflow.Selection{
			Action: sel.Action, ActionObjective: sel.ActionObjective, RequiredInputDocuments: sel.RequiredInputDocuments,
			RequiredConnection: sel.RequiredConnection, ParametersContext: sel.ParametersContext,
			ParametersSchema: workflow.ParametersSchema{Fields: fields},
		}
	}
	w, err := s.engine.Fork(ctx, UserFrom(ctx), in.ID, req)
	var fp *engine.ForkProblems
	if errors.As(err, &fp) {
		details := make([]error, len(fp.Lines))
		for i, line := range fp.Lines {
			details[i] = &huma.ErrorDetail{Location: "body." + fp.Field, Message: line}
		}
		return nil, huma.Error422UnprocessableEntity("the edited "+fp.Field+" is refused, as a live step's reply would be", details...)
	}
	if err != nil {
		return nil, s.fail(ctx, "forkWorkflow", err)
	}
	return &forkOutput{Location: "/api/v1/workflows/" + w.ID, Body: viewWorkflow(w)}, nil
}
