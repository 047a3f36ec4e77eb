package telemetry

import (
	"context"

	"github.com/twostep/twostep/workflow"
)

// ActionModel is the model the action registry calls (ai.process): each
// call becomes a chat span (stage action) under the action's
// execute_tool span, as the engine's own calls are under their step.
// Tracer is set at wiring time, before the first call (the tracer's
// redactor knows the registry's secrets only once the registry exists);
// while it is nil, calls are passed on untraced.
type ActionModel struct {
	workflow.Model
	Tracer workflow.Tracer
}

var _ workflow.Model = (*ActionModel)(nil)

// Generate calls the wrapped model inside a chat span.
func (m *ActionModel) Generate(ctx context.Context, req workflow.ModelRequest) (workflow.ModelResponse, error) {
	if m.Tracer == nil {
		return m.Model.Generate(ctx, req)
	}
	ctx, span := m.Tracer.Start(ctx, workflow.SpanStart{Kind: workflow.SpanModelCall, Stage: req.Stage, Prompt: req.Messages,
		MaxTokens: req.MaxTokens, JSON: req.JSON})
	resp, err := m.Model.Generate(ctx, req)
	outcome, problem := "ok", ""
	switch {
	case err != nil && ctx.Err() != nil:
		outcome, problem = "cancelled", err.Error()
	case err != nil:
		outcome, problem = "error", err.Error()
	}
	span.ModelReply(resp, outcome, problem)
	span.End(err)
	return resp, err
}
