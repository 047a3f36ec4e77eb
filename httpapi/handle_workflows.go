package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/twostep/twostep/apiv1"
	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/workflow"
)

// WorkflowPath names a workflow in a route.
type WorkflowPath struct {
	ID string `path:"id" maxLength:"64" doc:"Workflow id (wf_...)"`
}

type createWorkflowInput struct {
	Prefer string `header:"Prefer" maxLength:"200" doc:"wait=<seconds> (at most 60): answer 200 with the round's messages when the round ends or pauses within that time"`
	Body   apiv1.CreateWorkflowBody
}

type workflowOutput struct {
	Body apiv1.WorkflowView
}

type listWorkflowsInput struct {
	Limit  int    `query:"limit" minimum:"1" maximum:"200" default:"50" doc:"Page size"`
	Cursor string `query:"cursor" maxLength:"512" doc:"nextCursor of the previous page, with the same status"`
	Status string `query:"status" enum:"running,awaiting_approval,completed,failed,stopped" doc:"Only workflows with this status (awaiting_approval: the ones waiting for your decision)"`
}

type listWorkflowsOutput struct {
	Body apiv1.WorkflowList
}

func (s *Server) registerWorkflows(api huma.API) {
	huma.Register(api, huma.Operation{
		OperationID: "createWorkflow", Method: http.MethodPost, Path: "/api/v1/workflows",
		Summary: "Create a workflow and start its first round in the background", Tags: []string{"workflows"},
		DefaultStatus: http.StatusCreated, MaxBodyBytes: s.limits.MaxBodyBytes, BodyReadTimeout: time.Minute,
		Middlewares: huma.Middlewares{streamUploads(api, s.limits, s.limits.MaxBodyBytes, time.Minute)},
		Errors:      []int{400, 401, 413, 422, 429},
	}, s.createWorkflow)
	setMaxDocuments(api, "/api/v1/workflows", s.limits.MaxDocuments)
	huma.Register(api, huma.Operation{
		OperationID: "listWorkflows", Method: http.MethodGet, Path: "/api/v1/workflows",
		Summary: "List the caller's workflows, newest first", Tags: []string{"workflows"},
		Errors: []int{401, 422},
	}, s.listWorkflows)
	huma.Register(api, huma.Operation{
		OperationID: "getWorkflow", Method: http.MethodGet, Path: "/api/v1/workflows/{id}",
		Summary: "Get a workflow", Tags: []string{"workflows"}, Errors: []int{401, 404},
	}, s.getWorkflow)
	huma.Register(api, huma.Operation{
		OperationID: "deleteWorkflow", Method: http.MethodDelete, Path: "/api/v1/workflows/{id}",
		Summary: "Delete a workflow and everything it owns", Tags: []string{"workflows"},
		DefaultStatus: http.StatusNoContent, Errors: []int{401, 404},
	}, s.deleteWorkflow)
}

// createdOutput is createWorkflow's answer: a waitedOutput with the new
// workflow's Location (huma reads no headers from an embedded struct).
type createdOutput struct {
	Status            int
	PreferenceApplied string `header:"Preference-Applied" doc:"wait when the answer waited for the round (Prefer: wait)"`
	Location          string `header:"Location" doc:"The new workflow's URL path, /api/v1/workflows/{id}; on 201"`
	Body              apiv1.WorkflowResult
}

func (s *Server) createWorkflow(ctx context.Context, in *createWorkflowInput) (*createdOutput, error) {
	if err := s.limits.checkPrompt(in.Body.Prompt); err != nil {
		return nil, err
	}
	docs, err := s.limits.decodeDocuments(in.Body.Documents, stashFrom(ctx))
	if err != nil {
		return nil, err
	}
	sub, err := s.subscription(in.Body.Webhook)
	if err != nil {
		return nil, err
	}
	w, err := s.engine.Create(ctx, engine.NewWorkflow{
		UserID: UserFrom(ctx), Prompt: in.Body.Prompt, Mode: workflow.ModeName(in.Body.Mode),
		MaxSteps: in.Body.MaxSteps, Documents: docs, Webhook: sub,
	})
	if err != nil {
		return nil, s.fail(ctx, "createWorkflow", err)
	}
	waited := s.answerAfter(ctx, in.Prefer, w, http.StatusCreated)
	out := &createdOutput{Status: waited.Status, PreferenceApplied: waited.PreferenceApplied, Body: waited.Body}
	if out.Status == http.StatusCreated {
		out.Location = "/api/v1/workflows/" + w.ID
	}
	if sub != nil {
		out.Body.WebhookSecret = sub.Secret
	}
	return out, nil
}

func (s *Server) listWorkflows(ctx context.Context, in *listWorkflowsInput) (*listWorkflowsOutput, error) {
	list := func(p workflow.Page) ([]*workflow.Workflow, string, error) {
		return s.reads.List(ctx, UserFrom(ctx), p)
	}
	var keep func(*workflow.Workflow) bool
	if in.Status != "" {
		keep = func(w *workflow.Workflow) bool { return string(w.Status) == in.Status }
	}
	ws, next, err := filteredPage(list, in.Limit, in.Cursor, keep)
	if err != nil {
		if workflow.KindOf(err) == workflow.KindInvalid {
			return nil, invalid("query.cursor", "cursor is not one this server returned; start again without it", in.Cursor)
		}
		return nil, s.fail(ctx, "listWorkflows", err)
	}
	out := &listWorkflowsOutput{Body: apiv1.WorkflowList{Workflows: make([]apiv1.WorkflowView, len(ws)), NextCursor: next}}
	for i, w := range ws {
		out.Body.Workflows[i] = viewWorkflow(w)
	}
	return out, nil
}

func (s *Server) getWorkflow(ctx context.Context, in *WorkflowPath) (*workflowOutput, error) {
	if err := checkWorkflowID(in.ID); err != nil {
		return nil, s.fail(ctx, "getWorkflow", err)
	}
	w, err := s.engine.Get(ctx, UserFrom(ctx), in.ID)
	if err != nil {
		return nil, s.fail(ctx, "getWorkflow", err)
	}
	return &workflowOutput{Body: viewWorkflow(w)}, nil
}

func (s *Server) deleteWorkflow(ctx context.Context, in *WorkflowPath) (*struct{}, error) {
	if err := checkWorkflowID(in.ID); err != nil {
		return nil, s.fail(ctx, "deleteWorkflow", err)
	}
	if err := s.engine.Delete(ctx, UserFrom(ctx), in.ID); err != nil {
		return nil, s.fail(ctx, "deleteWorkflow", err)
	}
	return nil, nil
}

// checkWorkflowID answers a malformed id exactly like an unknown one, before
// it reaches a store key.
func checkWorkflowID(id string) error {
	if !workflow.ValidID(workflow.PrefixWorkflow, id) {
		return workflow.NoWorkflow(id)
	}
	return nil
}
