package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/twostep/twostep/adminv1"
	"github.com/twostep/twostep/workflow"
)

type replayInput struct {
	TraceID string `path:"traceId" maxLength:"64" doc:"Trace id (tr_...)"`
	Body    *adminv1.ReplayBody
}

func (a *Admin) registerReplay(api huma.API) {
	op := adminOp("adminReplay", http.MethodPost, "/admin/v1/traces/{traceId}/replay",
		"Send a recorded (or edited) prompt to the model now; nothing is stored", 404, 422)
	op.MaxBodyBytes = 1 << 20
	huma.Register(api, op, a.replay)
}

func (a *Admin) replay(ctx context.Context, in *replayInput) (*body[adminv1.ReplayResult], error) {
	t, err := a.reads.Trace(ctx, in.TraceID)
	if err != nil {
		return nil, a.fail(ctx, "adminReplay", err)
	}
	if len(t.Prompt) == 0 {
		return nil, huma.Error422UnprocessableEntity("trace " + t.ID + " records an action's execution, not a model call: there is no prompt to replay")
	}
	prompt := t.Prompt
	if in.Body != nil && len(in.Body.Prompt) > 0 {
		prompt = make([]workflow.PromptMessage, len(in.Body.Prompt))
		for i, m := range in.Body.Prompt {
			prompt[i] = workflow.PromptMessage{Role: m.Role, Content: m.Content}
		}
	}
	call := a.inspect.ReplayCall(ctx, t)
	start := time.Now()
	resp, err := a.model.Generate(ctx, workflow.ModelRequest{
		Messages: prompt, JSON: call.JSON, Stage: t.Stage, Output: call.Output,
	})
	mode := resp.OutputMode
	if mode == "" {
		mode = workflow.OutputText
	}
	out := adminv1.ReplayResult{
		Response: resp.Text, Model: resp.Model, PromptTokens: resp.PromptTokens,
		CompletionTokens: resp.CompletionTokens, CachedTokens: resp.CachedTokens,
		LatencyMs: time.Since(start).Milliseconds(), OutputMode: string(mode),
	}
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, a.fail(ctx, "adminReplay", workflow.WrapKind(workflow.KindUnavailable, ctx.Err(), "replay cancelled"))
	case err != nil:
		out.Error = "the model could not answer: " + workflow.PublicMessage(err)
	default:
		p, err := a.inspect.ParseReply(ctx, t, call.Reply(resp.Text, mode))
		if err != nil {
			return nil, a.fail(ctx, "adminReplay", err)
		}
		out.Parsed, out.Error, out.Note, out.Ungrounded = p.Parsed, p.Error, p.Note, p.Ungrounded
	}
	out.Response, out.Error = a.redact.String(out.Response), a.redact.String(out.Error)
	out.Parsed = a.redact.JSON(out.Parsed)
	for i, p := range out.Ungrounded {
		out.Ungrounded[i] = a.redact.String(p)
	}
	return &body[adminv1.ReplayResult]{Body: out}, nil
}
