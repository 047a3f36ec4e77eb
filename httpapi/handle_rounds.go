package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/twostep/twostep/workflow"
)

// NewRoundBody is the body of POST /api/v1/workflows/{id}/rounds.
type NewRoundBody struct {
	Prompt    string          `json:"prompt" minLength:"1" doc:"The next user prompt"`
	Documents []DocumentInput `json:"documents,omitempty" doc:"Documents for this round"`
}

type startRoundInput struct {
	WorkflowPath
	Prefer string `header:"Prefer" maxLength:"200" doc:"wait=<seconds> (at most 60): answer 200 with the round's messages when the round ends or pauses within that time"`
	OnBusy string `query:"onBusy" enum:"reject,enqueue,interrupt" doc:"While a round runs or awaits approval: reject (default) answers 409; enqueue queues this round to run when the rounds before it end (202, see queuedRounds); interrupt queues it first and stops the running round at its next safe point (between phases, never inside an action), so it starts next"`
	Body   NewRoundBody
}

// QueuedRoundView is a round waiting for the current one (onBusy=enqueue
// or interrupt).
type QueuedRoundView struct {
	MessageID string         `json:"messageId" doc:"The id its user message will have when it starts"`
	Round     int            `json:"round" doc:"The round number it will run as"`
	Title     string         `json:"title" doc:"The first line of its prompt (at most 100 characters)"`
	Documents []DocumentView `json:"documents"`
	Interrupt bool           `json:"interrupt" doc:"It stops the running round at its next safe point instead of waiting for it to end"`
	QueuedAt  time.Time      `json:"queuedAt"`
}

// viewQueue is w's queued rounds, never nil.
func viewQueue(w *workflow.Workflow) []QueuedRoundView {
	out := make([]QueuedRoundView, len(w.QueuedRounds))
	for i, q := range w.QueuedRounds {
		docs := make([]DocumentView, len(q.Documents))
		for j, d := range q.Documents {
			docs[j] = DocumentView{ID: d.ID, Name: d.Name, MimeType: d.MimeType, Size: d.Size}
		}
		out[i] = QueuedRoundView{MessageID: q.MessageID, Round: w.Round + i + 1, Title: workflow.TitleOf(q.Prompt),
			Documents: docs, Interrupt: q.Interrupt, QueuedAt: q.QueuedAt}
	}
	return out
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
	w, err := s.engine.StartRound(ctx, UserFrom(ctx), in.ID, workflow.NewRound{Prompt: in.Body.Prompt, Documents: docs, OnBusy: workflow.OnBusy(in.OnBusy)})
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
