package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/twostep/twostep/workflow"
)

// ReplayBody is the body of POST /admin/v1/traces/{traceId}/replay.
type ReplayBody struct {
	Prompt []ReplayMessage `json:"prompt,omitempty" maxItems:"20" doc:"An edited prompt to send instead of the recorded one"`
}

// ReplayMessage is one chat message of an edited prompt.
type ReplayMessage struct {
	Role    string `json:"role" enum:"system,user,assistant"`
	Content string `json:"content" minLength:"1"`
}

// ReplayResult is the model's answer now, parsed and validated the way the
// trace's stage parses it. A model failure is a result too (Error set), not
// an HTTP error: the replay itself worked.
type ReplayResult struct {
	Response         string          `json:"response"`
	Parsed           json.RawMessage `json:"parsed" doc:"The extracted JSON of the reply; null when none was found"`
	Error            string          `json:"error" doc:"Rejection lines or the model error; empty when the reply is accepted"`
	Note             string          `json:"note,omitempty" doc:"What the parse could not check"`
	Ungrounded       []string        `json:"ungrounded,omitempty" nullable:"false" doc:"Stage 2 only: the paths of the reply's values that appear in neither the objective nor the parameters context (docs/grounding.md), as its trace would list them; absent when none"`
	Model            string          `json:"model"`
	PromptTokens     int             `json:"promptTokens"`
	CompletionTokens int             `json:"completionTokens"`
	CachedTokens     int             `json:"cachedTokens" doc:"Prompt tokens the provider served from its prompt cache"`
	LatencyMs        int64           `json:"latencyMs"`
	OutputMode       string          `json:"outputMode" doc:"How the replay asked for its reply (tool, json_schema, json_object, text): a Stage 1 or Stage 2 replay sends the stage's schema as the engine does"`
}

type replayInput struct {
	TraceID string `path:"traceId" maxLength:"64" doc:"Trace id (tr_...)"`
	Body    *ReplayBody
}

func (a *Admin) registerReplay(api huma.API) {
	op := adminOp("adminReplay", http.MethodPost, "/admin/v1/traces/{traceId}/replay",
		"Send a recorded (or edited) prompt to the model now; nothing is stored", 404, 422)
	op.MaxBodyBytes = 1 << 20
	huma.Register(api, op, a.replay)
}

func (a *Admin) replay(ctx context.Context, in *replayInput) (*body[ReplayResult], error) {
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
	out := ReplayResult{
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
	return &body[ReplayResult]{Body: out}, nil
}
