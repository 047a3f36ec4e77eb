package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/twostep/twostep/prompts"
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
	Model            string          `json:"model"`
	PromptTokens     int             `json:"promptTokens"`
	CompletionTokens int             `json:"completionTokens"`
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
	t, err := a.trace(ctx, in.TraceID)
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
	output, fromNative := a.replayOutput(ctx, t)
	start := time.Now()
	resp, err := a.model.Generate(ctx, workflow.ModelRequest{
		Messages: prompt, JSON: t.Stage == workflow.StageOne || t.Stage == workflow.StageTwo, Stage: t.Stage, Output: output,
	})
	mode := resp.OutputMode
	if mode == "" {
		mode = workflow.OutputText
	}
	out := ReplayResult{
		Response: resp.Text, Model: resp.Model, PromptTokens: resp.PromptTokens,
		CompletionTokens: resp.CompletionTokens, LatencyMs: time.Since(start).Milliseconds(), OutputMode: string(mode),
	}
	reply := resp.Text
	if fromNative != nil && mode.Native() {
		reply = fromNative(reply)
	}
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, a.fail(ctx, "adminReplay", workflow.WrapKind(workflow.KindUnavailable, ctx.Err(), "replay cancelled"))
	case err != nil:
		out.Error = "the model could not answer: " + workflow.PublicMessage(err)
	default:
		if err := a.parseReply(ctx, t, reply, &out); err != nil {
			return nil, a.fail(ctx, "adminReplay", err)
		}
	}
	out.Response, out.Error = a.redact.String(out.Response), a.redact.String(out.Error)
	out.Parsed = a.redact.JSON(out.Parsed)
	return &body[ReplayResult]{Body: out}, nil
}

// parseReply parses reply (the response, mapped back from a native mode)
// as the trace's stage is parsed, against the workflow as it is now (its
// messages, the user's connections, the registry), and sets Parsed, Error
// and Note.
func (a *Admin) parseReply(ctx context.Context, t workflow.Trace, reply string, out *ReplayResult) error {
	wf, err := a.store.GetWorkflow(ctx, t.WorkflowID)
	if err != nil {
		return err
	}
	msgs, err := a.store.Messages(ctx, wf.ID, 0, 0)
	if err != nil {
		return err
	}
	switch t.Stage {
	case workflow.StageAction:
		// An action's own model call (ai.process) answers free text.
		out.Note = "an action's model call answers free text; nothing to parse"
		return nil
	case workflow.StageOne:
		res := prompts.ParseStage1(reply, prompts.Stage1Env{
			Registry: a.registry, Messages: msgs, Connections: a.connections(wf.UserID),
		})
		out.Parsed, out.Error = res.Parsed, strings.Join(res.Problems, "\n")
		return nil
	case workflow.StageTwo:
		sel, ok, err := a.stepSelection(ctx, wf, msgs, t)
		if err != nil {
			return err
		}
		if spec, known := a.registry.Action(sel.Action); ok && known {
			res := prompts.ParseStage2(reply, spec, sel.ParametersSchema.Fields, a.registry)
			out.Parsed, out.Error = res.Parsed, strings.Join(res.Problems, "\n")
			return nil
		}
		out.Note = "the step's Stage 1 selection is no longer known, so the parameters were not validated against the action's schema"
	default:
		out.Note = "the reply was only extracted as JSON; plan steps are validated by the action-plan mode when it runs"
	}
	raw, err := prompts.ExtractJSON(reply)
	if err != nil {
		out.Error = workflow.PublicMessage(err)
		return nil
	}
	out.Parsed = raw
	return nil
}

// replayOutput is the output schema the engine would send with the
// trace's stage call now (Stage 1: the registered actions and the user's
// connections; Stage 2: the step's selection cut from its action), and
// its reply mapping; nil for other stages, or when the step's selection
// or action is no longer known (the replay then asks for JSON only).
func (a *Admin) replayOutput(ctx context.Context, t workflow.Trace) (*workflow.OutputSchema, func(string) string) {
	if t.Stage != workflow.StageOne && t.Stage != workflow.StageTwo {
		return nil, nil
	}
	wf, err := a.store.GetWorkflow(ctx, t.WorkflowID)
	if err != nil {
		return nil, nil
	}
	if t.Stage == workflow.StageOne {
		out := prompts.Stage1Output(a.registry.Actions(), a.connections(wf.UserID))
		return &out, nil
	}
	msgs, err := a.store.Messages(ctx, wf.ID, 0, 0)
	if err != nil {
		return nil, nil
	}
	sel, ok, err := a.stepSelection(ctx, wf, msgs, t)
	if err != nil || !ok {
		return nil, nil
	}
	spec, known := a.registry.Action(sel.Action)
	if !known {
		return nil, nil
	}
	s2, err := prompts.NewStage2Output(spec, sel.ParametersSchema.Fields)
	if err != nil {
		return nil, nil
	}
	return &s2.Output, s2.FromNative
}
