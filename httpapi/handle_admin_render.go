package httpapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/twostep/twostep/modes/inspect"
	"github.com/twostep/twostep/templates"
	"github.com/twostep/twostep/workflow"
)

// RenderBody is the body of POST /admin/v1/workflows/{id}/render.
type RenderBody struct {
	Stage    workflow.Stage `json:"stage" enum:"stage1,stage2,plan" doc:"Which prompt to render"`
	Template string         `json:"template,omitempty" maxLength:"262144" doc:"A template source to render instead of the gateway's (same syntax and key rules as a *.tmpl file)"`
	Feedback []string       `json:"feedback,omitempty" maxItems:"50" doc:"Problem lines of a rejected attempt, to render the retry that carries them as VALIDATION_FEEDBACK"`
}

// RenderResult is a fully rendered prompt: the bytes the engine would send
// for the workflow's current state, and the text of every placeholder.
type RenderResult struct {
	Stage        workflow.Stage           `json:"stage"`
	Template     string                   `json:"template" doc:"The template rendered (its name; an override keeps the stage's name)"`
	Prompt       []workflow.PromptMessage `json:"prompt"`
	Placeholders map[string]string        `json:"placeholders"`
	// Selection and Source say which Stage 1 selection a stage2 render used.
	Selection *Selection `json:"selection,omitempty" doc:"The Stage 1 selection Stage 2 was rendered from"`
	Source    string     `json:"source,omitempty" doc:"Where the selection came from: checkpoint, trace <id>, or message <id> (partial)"`
}

type renderInput struct {
	WorkflowPath
	Body RenderBody
}

func (a *Admin) registerRender(api huma.API) {
	op := adminOp("adminRender", http.MethodPost, "/admin/v1/workflows/{id}/render",
		"Render a stage's prompt for the workflow's current state: no model call, no state change", 404, 409, 422)
	op.MaxBodyBytes = 1 << 20
	huma.Register(api, op, a.render)
}

func (a *Admin) render(ctx context.Context, in *renderInput) (*body[RenderResult], error) {
	var override *templates.Template
	if in.Body.Template != "" {
		t, err := inspect.Template(in.Body.Stage, in.Body.Template)
		if err != nil {
			return nil, invalid("body.template", err.Error(), nil)
		}
		override = &t
	}
	wf, err := a.reads.Get(ctx, in.ID)
	if err != nil {
		return nil, a.fail(ctx, "adminRender", err)
	}
	r, err := a.inspect.Render(ctx, wf, in.Body.Stage, override, in.Body.Feedback)
	if err != nil {
		return nil, a.fail(ctx, "adminRender", err)
	}
	res := RenderResult{Stage: r.Stage, Template: r.Template, Prompt: a.redact.Prompt(r.Prompt),
		Placeholders: r.Placeholders, Selection: viewSelection(r.Selection), Source: r.Source}
	for k, v := range res.Placeholders {
		res.Placeholders[k] = a.redact.String(v)
	}
	return &body[RenderResult]{Body: res}, nil
}
