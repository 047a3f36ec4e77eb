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

type startRoundInput struct {
	WorkflowPath
	Prefer string `header:"Prefer" maxLength:"200" doc:"wait=<seconds> (at most 60): answer 200 with the round's messages when the round ends or pauses within that time"`
	OnBusy string `query:"onBusy" enum:"reject,enqueue,interrupt" doc:"While a round runs or awaits approval: reject (default) answers 409; enqueue queues this round to run when the rounds before it end (202, see queuedRounds); interrupt queues it first and stops the running round at its next safe point (between phases, never inside an action), so it starts next"`
	Body   apiv1.NewRoundBody
}

func (s *Server) registerRounds(api huma.API) {
	huma.Register(api, huma.Operation{
		OperationID: "startRound", Method: http.MethodPost, Path: "/api/v1/workflows/{id}/rounds",
		Summary: "Start the next round; while one runs: 409, or queued with onBusy=enqueue|interrupt", Tags: []string{"rounds"},
		DefaultStatus: http.StatusAccepted, MaxBodyBytes: s.limits.MaxBodyBytes, BodyReadTimeout: time.Minute,
		Middlewares: huma.Middlewares{streamUploads(api, s.limits, s.limits.MaxBodyBytes, time.Minute)},
		Errors:      []int{400, 401, 404, 409, 413, 422, 429},
	}, s.startRound)
	setMaxDocuments(api, "/api/v1/workflows/{id}/rounds", s.limits.MaxDocuments)
	huma.Register(api, huma.Operation{
		OperationID: "stopWorkflow", Method: http.MethodPost, Path: "/api/v1/workflows/{id}/stop",
		Summary: "Stop the running round, cancelling its in-flight model call", Tags: []string{"rounds"},
		Errors: []int{401, 404, 409},
	}, s.stopWorkflow)
	huma.Register(api, huma.Operation{
		OperationID: "resumeWorkflow", Method: http.MethodPost, Path: "/api/v1/workflows/{id}/resume",
		Summary: "Continue a failed or stopped round from its last checkpoint", Tags: []string{"rounds"},
		DefaultStatus: http.StatusAccepted, Errors: []int{401, 404, 409, 429},
	}, s.resumeWorkflow)
}

func (s *Server) startRound(ctx context.Context, in *startRoundInput) (*waitedOutput, error) {
	if err := checkWorkflowID(in.ID); err != nil {
		return nil, s.fail(ctx, "startRound", err)
	}
	if err := s.limits.checkPrompt(in.Body.Prompt); err != nil {
		return nil, err
	}
	docs, err := s.limits.decodeDocuments(in.Body.Documents, stashFrom(ctx))
	if err != nil {
		return nil, err
	}
	w, err := s.engine.StartRound(ctx, UserFrom(ctx), in.ID, engine.NewRound{Prompt: in.Body.Prompt, Documents: docs, OnBusy: workflow.OnBusy(in.OnBusy)})
	if err != nil {
		return nil, s.fail(ctx, "startRound", err)
	}
	if len(w.QueuedRounds) > 0 {
		// Queued: nothing to wait for in this request.
		return s.answerAfter(ctx, "", w, http.StatusAccepted), nil
	}
	return s.answerAfter(ctx, in.Prefer, w, http.StatusAccepted), nil
}

func (s *Server) stopWorkflow(ctx context.Context, in *WorkflowPath) (*workflowOutput, error) {
	if err := checkWorkflowID(in.ID); err != nil {
		return nil, s.fail(ctx, "stopWorkflow", err)
	}
	w, err := s.engine.Stop(ctx, UserFrom(ctx), in.ID)
	if err != nil {
		return nil, s.fail(ctx, "stopWorkflow", err)
	}
	return &workflowOutput{Body: viewWorkflow(w)}, nil
}

func (s *Server) resumeWorkflow(ctx context.Context, in *WorkflowPath) (*workflowOutput, error) {
	if err := checkWorkflowID(in.ID); err != nil {
		return nil, s.fail(ctx, "resumeWorkflow", err)
	}
	w, err := s.engine.Resume(ctx, UserFrom(ctx), in.ID)
	if err != nil {
		return nil, s.fail(ctx, "resumeWorkflow", err)
	}
	return &workflowOutput{Body: viewWorkflow(w)}, nil
}
