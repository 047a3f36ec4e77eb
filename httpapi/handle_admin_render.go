package httpapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/twostep/twostep/placeholders"
	"github.com/twostep/twostep/prompts"
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
	Selection *workflow.Selection `json:"selection,omitempty" doc:"The Stage 1 selection Stage 2 was rendered from"`
	Source    string              `json:"source,omitempty" doc:"Where the selection came from: checkpoint, trace <id>, or message <id> (partial)"`
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
	override, err := parseOverride(in.Body)
	if err != nil {
		return nil, err
	}
	wf, err := a.workflow(ctx, in.ID)
	if err != nil {
		return nil, a.fail(ctx, "adminRender", err)
	}
	msgs, err := a.store.Messages(ctx, wf.ID, 0, 0)
	if err != nil {
		return nil, a.fail(ctx, "adminRender", err)
	}
	res, err := a.renderStage(ctx, wf, msgs, in.Body.Stage, override, prompts.Feedback(in.Body.Feedback))
	if err != nil {
		return nil, a.fail(ctx, "adminRender", err)
	}
	res.Prompt = a.redact.Prompt(res.Prompt)
	for k, v := range res.Placeholders {
		res.Placeholders[k] = a.redact.String(v)
	}
	return &body[RenderResult]{Body: res}, nil
}

// parseOverride parses the body's template with the stage's name, so the
// stage's key rules apply (Stage 2 can never be given the history).
func parseOverride(b RenderBody) (*templates.Template, error) {
	if b.Template == "" {
		return nil, nil
	}
	t, err := templates.Parse(string(b.Stage), b.Template)
	if err != nil {
		return nil, invalid("body.template", err.Error(), nil)
	}
	return &t, nil
}

// renderStage renders stage exactly as the modes do: Stage 1 and plan from
// the workflow's messages, every registered action (the plan's offered
// subset) and the user's connections; Stage 2 from a Stage 1 selection only.
func (a *Admin) renderStage(ctx context.Context, wf *workflow.Workflow, msgs []workflow.Message,
	stage workflow.Stage, override *templates.Template, feedback string) (RenderResult, error) {
	res := RenderResult{Stage: stage}
	var rendered prompts.Rendered
	var values map[string]string
	var err error
	switch stage {
	case workflow.StageOne, workflow.StagePlan:
		in := prompts.Stage1Input{
			Workflow: wf, Messages: msgs, Actions: a.actionsOf(wf.UserID),
			Connections: a.connections(wf.UserID), Feedback: feedback, Template: override,
		}
		if stage == workflow.StageOne {
			rendered, err = a.prompts.Stage1(in)
		} else {
			if a.planActions != nil {
				in.Actions = a.planActions(placeholders.UserPromptText(msgs, wf.Round), in.Actions)
			}
			rendered, err = a.prompts.Plan(in)
		}
		values = a.prompts.Stage1Values(in)
	case workflow.StageTwo:
		var sel workflow.Selection
		sel, res.Source, err = a.selection(ctx, wf, msgs)
		if err != nil {
			return res, err
		}
		spec, ok := a.registry.Action(sel.Action)
		if !ok {
			return res, workflow.Errorf(workflow.KindConflict,
				"stage2 cannot be rendered: the selected action %q is no longer registered", sel.Action)
		}
		in := prompts.Stage2Input{Selection: sel, Action: spec, Feedback: feedback, Template: override}
		if rendered, err = a.prompts.Stage2(in); err == nil {
			values, err = a.prompts.Stage2Values(in)
		}
		res.Selection = &sel
	default:
		return res, workflow.Errorf(workflow.KindInvalid, "stage %q cannot be rendered: use stage1, stage2 or plan", stage)
	}
	if err != nil {
		return res, err
	}
	res.Template, res.Prompt, res.Placeholders = rendered.Template, rendered.Messages, values
	return res, nil
}

// connections is what Run.Connections gives a mode: never nil.
func (a *Admin) connections(userID string) []workflow.Connection {
	if c := a.registry.Connections(userID); c != nil {
		return c
	}
	return []workflow.Connection{}
}

// actionsOf returns the actions userID's rounds are offered (a registry
// with per-user MCP tools shows only that user's).
func (a *Admin) actionsOf(userID string) []workflow.ActionSpec {
	if scoped, ok := a.registry.(workflow.UserScoped); ok {
		return scoped.ForUser(userID).Actions()
	}
	return a.registry.Actions()
}
