package llm

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/rs/zerolog"

	"github.com/twostep/twostep/workflow"
)

// Route is one configured model of a Router.
type Route struct {
	// Name is "provider/model", listed by Router.Models.
	Name  string
	Model workflow.Model
	// MaxTokens is sent when a request sets none (0: the provider's default).
	MaxTokens int
	// OutputMode is this route's output mode when a request sets none
	// ("" lets the model choose: its configured mode or its provider's
	// default). It must be one the route's provider can use.
	OutputMode workflow.OutputMode
	// Temperature is sent when a request sets none (nil: the provider's
	// default).
	Temperature *float64
}

// Router is a workflow.Model that sends each call to the model configured
// for its stage (DESIGN §9.2 `models:`) and, when that model still fails
// after its own retries, to each fallback in order. The reply names the
// model that answered (ModelResponse.Model, the trace's `model`). A call
// whose ctx is done is never passed on. Router is safe for concurrent use
// when its models are.
type Router struct {
	def      Route
	stages   map[workflow.Stage]Route
	fallback []Route
}

var _ workflow.Model = (*Router)(nil)

// NewRouter returns a Router: stages maps a stage (stage1, stage2, plan,
// repair, action) to its model, every other stage goes to def; fallback is
// tried in order after a failure.
func NewRouter(def Route, stages map[workflow.Stage]Route, fallback []Route) *Router {
	return &Router{def: def, stages: stages, fallback: fallback}
}

// Name returns the default model's name, for logs.
func (r *Router) Name() string { return r.def.Name }

// Route returns the primary route of stage.
func (r *Router) Route(stage workflow.Stage) Route {
	if rt, ok := r.stages[stage]; ok {
		return rt
	}
	return r.def
}

// Models lists every configured model name once: the default, the stage
// models, then the fallbacks (for /readyz and the admin page).
func (r *Router) Models() []string {
	var names []string
	for _, rt := range r.routes() {
		names = append(names, rt.Name)
	}
	return names
}

// Generate calls the stage's model, then each fallback after a failure,
// and returns the first reply; the error of the last model tried (with
// every earlier one) when none answered. A request without maxTokens or
// temperature gets the route's; a fallback without a temperature of its
// own uses the stage's, so a stage keeps its sampling when it fails over.
func (r *Router) Generate(ctx context.Context, req workflow.ModelRequest) (workflow.ModelResponse, error) {
	primary := r.Route(req.Stage)
	chain := append([]Route{primary}, r.fallback...)
	var errs []error
	for i, rt := range chain {
		call := req
		if call.MaxTokens == 0 {
			call.MaxTokens = rt.MaxTokens
		}
		if call.OutputMode == "" {
			call.OutputMode = rt.OutputMode
		}
		if call.Temperature == nil {
			call.Temperature = cmp.Or(rt.Temperature, primary.Temperature)
		}
		resp, err := rt.Model.Generate(ctx, call)
		if err == nil {
			if resp.Model == "" {
				resp.Model = rt.Name
			}
			return resp, nil
		}
		if ctx.Err() != nil {
			return workflow.ModelResponse{}, err
		}
		errs = append(errs, fmt.Errorf("%s: %w", rt.Name, err))
		if i+1 < len(chain) {
			zerolog.Ctx(ctx).Warn().Str("stage", string(req.Stage)).Str("model", rt.Name).
				Str("next", chain[i+1].Name).Str("error", err.Error()).Msg("llm call failed after its retries, trying the fallback")
		}
	}
	if len(errs) == 1 {
		return workflow.ModelResponse{}, errs[0]
	}
	return workflow.ModelResponse{}, workflow.WrapKind(workflow.KindOf(errs[len(errs)-1]), errors.Join(errs...),
		"every model failed (%d tried)", len(errs))
}
