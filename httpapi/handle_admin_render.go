package httpapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/twostep/twostep/adminv1"
	"github.com/twostep/twostep/modes/inspect"
	"github.com/twostep/twostep/templates"
	"github.com/twostep/twostep/workflow"
)

type renderInput struct {
	WorkflowPath
	Body adminv1.RenderBody
}

func (a *Admin) registerRender(api huma.API) {
	op := adminOp("adminRender", http.MethodPost, "/admin/v1/workflows/{id}/render",
		"Render a stage's prompt for the workflow's current state: no model call, no state change", 404, 409, 422)
	op.MaxBodyBytes = 1 << 20
	huma.Register(api, op, a.render)
}

func (a *Admin) render(ctx context.Context, in *renderInput) (*body[adminv1.RenderResult], error) {
	stage := workflow.Stage(in.Body.Stage)
	var override *templates.Template
	if in.Body.Template != "" {
		t, err := inspect.Template(stage, in.Body.Template)
		if err != nil {
			return nil, invalid("body.template", err.Error(), nil)
		}
		override = &t
	}
	wf, err := a.reads.Get(ctx, in.ID)
	if err != nil {
		return nil, a.fail(ctx, "adminRender", err)
	}
	r, err := a.inspect.Render(ctx, wf, stage, override, in.Body.Feedback)
	if err != nil {
		return nil, a.fail(ctx, "adminRender", err)
	}
	res := adminv1.RenderResult{Stage: string(r.Stage), Template: r.Template, Prompt: wireOf[[]adminv1.PromptMessage](a.redact.Prompt(r.Prompt)),
		Placeholders: r.Placeholders, Selection: viewSelection(r.Selection), Source: r.Source}
	for k, v := range res.Placeholders {
		res.Placeholders[k] = a.redact.String(v)
	}
	return &body[adminv1.RenderResult]{Body: res}, nil
}
