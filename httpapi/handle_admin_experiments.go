package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/rs/zerolog"

	"github.com/twostep/twostep/adminv1"
	"github.com/twostep/twostep/experiments"
	"github.com/twostep/twostep/workflow"
)

// datasetWriteWait bounds each dataset line's write, so a client that
// stops reading ends the stream.
const datasetWriteWait = 30 * time.Second

type experimentInput struct {
	Body adminv1.ExperimentBody
}

type experimentPath struct {
	ID string `path:"id" maxLength:"64" doc:"Experiment id (ex_...)"`
}

type datasetInput struct {
	Stage workflow.Stage `query:"stage" required:"true" enum:"stage1,stage2" doc:"Which stage's recorded calls"`
	Since time.Time      `query:"since" doc:"Only calls recorded at or after this time (RFC 3339)"`
}

func (a *Admin) registerExperiments(api huma.API) {
	huma.Register(api, huma.Operation{
		OperationID: "adminDataset", Method: http.MethodGet, Path: "/admin/v1/datasets",
		Summary: "Every recorded accepted call of a stage as JSON Lines: inputs, prompt, accepted output, model (docs/experiments.md)",
		Tags:    []string{"admin"}, Errors: []int{401, 403, 422},
		Responses: map[string]*huma.Response{"200": {Description: "One JSON object per line", Content: map[string]*huma.MediaType{
			"application/jsonl": {Schema: &huma.Schema{Type: "string"}}}}},
	}, a.dataset)
	if a.experiments == nil {
		return
	}
	start := adminOp("adminStartExperiment", http.MethodPost, "/admin/v1/experiments",
		"Re-run a stage's recorded calls under an override; nothing executes, no workflow changes; 429 at the running experiments' limit or with the admin's budget spent (docs/experiments.md)", 404, 422, 429)
	start.DefaultStatus = http.StatusAccepted
	start.MaxBodyBytes = 2 << 20
	huma.Register(api, start, a.startExperiment)
	huma.Register(api, adminOp("adminGetExperiment", http.MethodGet, "/admin/v1/experiments/{id}",
		"An experiment: per call the recorded and new results, agreement, tokens and cost; totals", 404), a.getExperiment)
	huma.Register(api, adminOp("adminStopExperiment", http.MethodPost, "/admin/v1/experiments/{id}/stop",
		"Stop a running experiment: its calls in flight are cancelled and it is stored stopped with the calls done", 404), a.stopExperiment)
}

func (a *Admin) startExperiment(ctx context.Context, in *experimentInput) (*body[adminv1.ExperimentID], error) {
	b := in.Body
	spec := experiments.Spec{Stage: workflow.Stage(b.Stage), Workflows: b.Workflows, StartedBy: UserFrom(ctx)}
	if b.Filter != nil {
		if len(b.Workflows) > 0 {
			return nil, invalid("body.filter", "give workflows or filter, not both", nil)
		}
		spec.Since, spec.Action = b.Filter.Since, b.Filter.Action
	}
	if b.Override != nil {
		spec.Templates = b.Override.Templates
		if m := b.Override.Model; m != nil {
			spec.Model = &experiments.ModelRef{Provider: m.Provider, Model: m.Model}
		}
	}
	for _, id := range b.Workflows {
		if _, err := a.reads.Get(ctx, id); err != nil {
			return nil, a.fail(ctx, "adminStartExperiment", err)
		}
	}
	if err := a.experiments.Check(spec); err != nil {
		return nil, invalid("body.override", workflow.PublicMessage(err), nil)
	}
	e, err := a.experiments.Start(ctx, spec)
	if err != nil {
		if workflow.KindOf(err) == workflow.KindInvalid {
			return nil, invalid("body.override.model", workflow.PublicMessage(err), nil)
		}
		return nil, a.fail(ctx, "adminStartExperiment", err)
	}
	return &body[adminv1.ExperimentID]{Body: adminv1.ExperimentID{ID: e.ID}}, nil
}

func (a *Admin) getExperiment(ctx context.Context, in *experimentPath) (*body[adminv1.Experiment], error) {
	e, err := a.experiments.Get(ctx, in.ID)
	if err != nil {
		return nil, a.fail(ctx, "adminGetExperiment", err)
	}
	return &body[adminv1.Experiment]{Body: viewExperiment(e)}, nil
}

func (a *Admin) stopExperiment(ctx context.Context, in *experimentPath) (*body[adminv1.Experiment], error) {
	e, err := a.experiments.Stop(ctx, in.ID)
	if err != nil {
		return nil, a.fail(ctx, "adminStopExperiment", err)
	}
	return &body[adminv1.Experiment]{Body: viewExperiment(e)}, nil
}

// dataset streams the lines, one store page at a time; an error after the
// first line ends the stream early (logged), as the status is sent.
func (a *Admin) dataset(ctx context.Context, in *datasetInput) (*huma.StreamResponse, error) {
	return &huma.StreamResponse{Body: func(hctx huma.Context) {
		hctx.SetHeader("Content-Type", "application/jsonl")
		hctx.SetHeader("Cache-Control", "no-store")
		hctx.SetStatus(http.StatusOK)
		w := hctx.BodyWriter()
		enc := json.NewEncoder(w)
		err := experiments.Dataset(hctx.Context(), a.reads, in.Stage, in.Since, func(l experiments.Line) error {
			if rw, ok := w.(http.ResponseWriter); ok {
				_ = http.NewResponseController(rw).SetWriteDeadline(time.Now().Add(datasetWriteWait))
			}
			return enc.Encode(l)
		})
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		if err != nil && hctx.Context().Err() == nil {
			zerolog.Ctx(ctx).Warn().Err(err).Msg("dataset stream ended early")
		}
	}}, nil
}

// viewExperiment is e's wire form.
func viewExperiment(e *experiments.Experiment) adminv1.Experiment {
	return wireOf[adminv1.Experiment](e)
}
