package httpapi

import (
	"context"
	"errors"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/twostep/twostep/workflow"
)

// ForkBody is the body of POST /api/v1/workflows/{id}/fork (DESIGN §10.4).
type ForkBody struct {
	Round      int            `json:"round" minimum:"1" doc:"The round of the step to fork at"`
	Step       int            `json:"step" minimum:"1" doc:"The step to fork at: the fork holds every message before it and runs it again"`
	Selection  *ForkSelection `json:"selection,omitempty" doc:"An edited Stage 1 selection, judged as a live Stage 1 reply in the fork: the step starts at Stage 2 with it"`
	Parameters map[string]any `json:"parameters,omitempty" doc:"Edited Stage 2 parameters for the selection (this one, or the one the original recorded at that step), judged as a live Stage 2 reply: the step starts at execution with them (approvals still apply)"`
}

// ForkSelection is an edited Stage 1 selection: the fields of a Stage 1
// reply (DESIGN §3) but learnings.
type ForkSelection struct {
	Action                 string               `json:"action" minLength:"1" doc:"The action to run (method.action)"`
	ActionObjective        string               `json:"actionObjective,omitempty"`
	RequiredInputDocuments []string             `json:"requiredInputDocuments,omitempty" doc:"docList:/docItem: references, resolved in the fork"`
	RequiredConnection     string               `json:"requiredConnection,omitempty" doc:"A connection label of the caller's"`
	ParametersContext      string               `json:"parametersContext,omitempty" doc:"What Stage 2 reads"`
	ParametersSchema       ForkParametersSchema `json:"parametersSchema,omitempty"`
}

// ForkParametersSchema lists the parameters a selection asks Stage 2 for.
type ForkParametersSchema struct {
	Fields []ForkField `json:"fields,omitempty"`
}

// ForkField is one parameter a selection asks Stage 2 to fill.
type ForkField struct {
	Name        string `json:"name" minLength:"1"`
	Type        string `json:"type,omitempty" doc:"string, number, boolean, enum or object; left out for a parameter the action registers, whose type and required flag are the action's"`
	Required    bool   `json:"required,omitempty"`
	Description string `json:"description,omitempty"`
}

type forkInput struct {
	WorkflowPath
	Body ForkBody
}

type forkOutput struct {
	Location string `header:"Location" doc:"The fork's URL"`
	Body     WorkflowView
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
	req := workflow.ForkRequest{Round: in.Body.Round, Step: in.Body.Step, Parameters: in.Body.Parameters}
	if sel := in.Body.Selection; sel != nil {
		fields := make([]workflow.FieldSpec, len(sel.ParametersSchema.Fields))
		for i, f := range sel.ParametersSchema.Fields {
			fields[i] = workflow.FieldSpec{Name: f.Name, Type: f.Type, Required: f.Required, Description: f.Description}
		}
		req.Selection = &workflow.Selection{
			Action: sel.Action, ActionObjective: sel.ActionObjective, RequiredInputDocuments: sel.RequiredInputDocuments,
			RequiredConnection: sel.RequiredConnection, ParametersContext: sel.ParametersContext,
			ParametersSchema: workflow.ParametersSchema{Fields: fields},
		}
	}
	w, err := s.engine.Fork(ctx, UserFrom(ctx), in.ID, req)
	var fp *workflow.ForkProblems
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
