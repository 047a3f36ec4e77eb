package llm

import "github.com/twostep/twostep/workflow"

var (
	_ workflow.OutputPlanner = (*Model)(nil)
	_ workflow.OutputPlanner = (*Router)(nil)
)

// PlanOutput returns the output mode Generate(req) asks the provider for
// first: the request's mode, else the configured one, else the provider's
// default, falling back to json_object (or text) when req has no schema the
// provider can take natively. A provider that refuses a native request
// still makes Generate retry in json_object mode.
func (m *Model) PlanOutput(req workflow.ModelRequest) workflow.OutputMode {
	return m.planOutput(req).mode
}

// PlanOutput returns the output mode req's stage model plans for it, with
// the route's mode when req sets none; text when that model cannot say. A
// fallback model is not asked: it is used only after the stage's fails.
func (r *Router) PlanOutput(req workflow.ModelRequest) workflow.OutputMode {
	rt := r.Route(req.Stage)
	if req.OutputMode == "" {
		req.OutputMode = rt.OutputMode
	}
	return workflow.PlannedOutput(rt.Model, req)
}
