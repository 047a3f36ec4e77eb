package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/twostep/twostep/apiv1"
	"github.com/twostep/twostep/workflow"
)

// AdminWorkflowView is a workflow as an admin sees it: the API view plus
// the checkpoint of its current step (phase, Stage 1 selection, parameters).
type AdminWorkflowView struct {
	apiv1.WorkflowView
	Checkpoint *CheckpointView `json:"checkpoint" doc:"The persisted phase of the step the round runs or would resume from: kept while it runs or awaits approval and after it stopped or failed (resume goes on from it); null once a round completed"`
	// TraceContext finds the round in the tracing backend (docs/observability.md).
	TraceContext workflow.TraceContext `json:"traceContext" doc:"W3C traceparents of the request that started the round (origin) and of its last run's round span (round); empty when tracing is off"`
}

// AdminWorkflowList is a page of workflows, newest first.
type AdminWorkflowList struct {
	Workflows  []AdminWorkflowView `json:"workflows"`
	NextCursor string              `json:"nextCursor" doc:"Cursor of the next page; empty on the last page"`
}

// TraceView is a trace as DESIGN §6 shows it.
type TraceView struct {
	ID               string                   `json:"id"`
	WorkflowID       string                   `json:"workflowId"`
	Round            int                      `json:"round"`
	Step             int                      `json:"step"`
	Stage            workflow.Stage           `json:"stage" enum:"stage1,stage2,plan,repair,action,compact"`
	Attempt          int                      `json:"attempt"`
	Template         string                   `json:"template"`
	Prompt           []workflow.PromptMessage `json:"prompt"`
	Response         string                   `json:"response"`
	Parsed           json.RawMessage          `json:"parsed" doc:"The extracted JSON of the reply; null when none was found"`
	Error            string                   `json:"error" doc:"The rejection or model error; empty when the reply was accepted"`
	Model            string                   `json:"model"`
	PromptTokens     int                      `json:"promptTokens"`
	CompletionTokens int                      `json:"completionTokens"`
	CachedTokens     int                      `json:"cachedTokens" doc:"Prompt tokens the provider served from its prompt cache (0 when it reported none)"`
	CacheWriteTokens int                      `json:"cacheWriteTokens,omitempty" doc:"Prompt tokens the provider wrote to its cache (Anthropic); absent when none"`
	LatencyMs        int64                    `json:"latencyMs"`
	FinishReason     string                   `json:"finishReason" doc:"The provider's reason the reply ended (stop, length, end_turn, max_tokens); empty when it gave none"`
	Retries          int                      `json:"retries" doc:"Provider failures (429, 5xx, timeouts) retried before this answer"`
	OutputMode       workflow.OutputMode      `json:"outputMode" doc:"How the call asked for a structured reply: tool (a forced tool call), json_schema (a response format with the stage's schema), json_object or text; empty on a trace that records no model call, or one stored before the field existed"`
	Ungrounded       []string                 `json:"ungrounded,omitempty" nullable:"false" doc:"Stage 2 only: the paths of the values (ticketId, lines[1].sku) that appear in neither the objective nor the parameters context Stage 2 was shown (docs/grounding.md); absent when none"`
	CreatedAt        time.Time                `json:"createdAt"`
}

// TraceList is a workflow's traces, oldest first.
type TraceList struct {
	Traces []TraceView `json:"traces"`
}

// TemplateView is one prompt template of the running gateway.
type TemplateView struct {
	Name   string   `json:"name"`
	Keys   []string `json:"keys" doc:"The placeholders the template uses"`
	Source string   `json:"source"`
}

// TemplateList lists the gateway's templates by name.
type TemplateList struct {
	Templates []TemplateView `json:"templates"`
}

type adminListInput struct {
	UserID string `query:"userId" maxLength:"128" doc:"Only this user's workflows; without it, every user's"`
	Limit  int    `query:"limit" minimum:"1" maximum:"200" default:"50" doc:"Page size"`
	Cursor string `query:"cursor" maxLength:"512" doc:"nextCursor of the previous page, with the same userId, status and q (or none)"`
	Status string `query:"status" enum:"running,awaiting_approval,completed,failed,stopped" doc:"Only workflows with this status"`
	Q      string `query:"q" maxLength:"200" doc:"Only workflows whose title (first prompt line), id, user or error contains this text, ignoring case"`
}

type tracePath struct {
	TraceID string `path:"traceId" maxLength:"64" doc:"Trace id (tr_...)"`
}

type body[T any] struct{ Body T }

func (a *Admin) registerReads(api huma.API) {
	huma.Register(api, adminOp("adminListWorkflows", http.MethodGet, "/admin/v1/workflows",
		"List every user's workflows (or one user's, with ?userId=), newest first, with a cursor; filter by status and text (q)", 422), a.listWorkflows)
	huma.Register(api, adminOp("adminGetWorkflow", http.MethodGet, "/admin/v1/workflows/{id}",
		"Get any user's workflow with its checkpoint", 404), a.getWorkflow)
	huma.Register(api, adminOp("adminListMessages", http.MethodGet, "/admin/v1/workflows/{id}/messages",
		"List any user's workflow messages in seq order", 404), a.listMessages)
	huma.Register(api, adminOp("adminListTraces", http.MethodGet, "/admin/v1/workflows/{id}/traces",
		"Every kept LLM call (and action) trace of a workflow, oldest first", 404), a.listTraces)
	huma.Register(api, adminOp("adminGetTrace", http.MethodGet, "/admin/v1/traces/{traceId}",
		"Get one trace", 404), a.getTrace)
	huma.Register(api, adminOp("adminListTemplates", http.MethodGet, "/admin/v1/templates",
		"The prompt templates the gateway renders with"), a.listTemplates)
}

// listWorkflows lists one user's workflows (?userId=) or every user's, newest
// first, a page at a time: nextCursor resumes the listing it came from.
// With status or q it keeps only the matching ones (filteredPage).
func (a *Admin) listWorkflows(ctx context.Context, in *adminListInput) (*body[AdminWorkflowList], error) {
	list := func(p workflow.Page) ([]*workflow.Workflow, string, error) {
		return a.reads.List(ctx, in.UserID, p)
	}
	var keep func(*workflow.Workflow) bool
	if q := strings.ToLower(strings.TrimSpace(in.Q)); in.Status != "" || q != "" {
		keep = func(w *workflow.Workflow) bool {
			if in.Status != "" && string(w.Status) != in.Status {
				return false
			}
			return q == "" || strings.Contains(strings.ToLower(w.Title+"\x00"+w.ID+"\x00"+w.UserID+"\x00"+w.Error), q)
		}
	}
	ws, next, err := filteredPage(list, in.Limit, in.Cursor, keep)
	if workflow.KindOf(err) == workflow.KindInvalid {
		return nil, invalid("query.cursor", "cursor is not one this server returned; start again without it", in.Cursor)
	}
	if err != nil {
		return nil, a.fail(ctx, "adminListWorkflows", err)
	}
	out := &body[AdminWorkflowList]{Body: AdminWorkflowList{Workflows: make([]AdminWorkflowView, len(ws)), NextCursor: next}}
	for i, w := range ws {
		out.Body.Workflows[i] = adminView(w)
	}
	return out, nil
}

func adminView(w *workflow.Workflow) AdminWorkflowView {
	return AdminWorkflowView{WorkflowView: viewWorkflow(w), Checkpoint: viewCheckpoint(w.Checkpoint), TraceContext: w.TraceContext}
}

func (a *Admin) getWorkflow(ctx context.Context, in *WorkflowPath) (*body[AdminWorkflowView], error) {
	w, err := a.reads.Get(ctx, in.ID)
	if err != nil {
		return nil, a.fail(ctx, "adminGetWorkflow", err)
	}
	return &body[AdminWorkflowView]{Body: adminView(w)}, nil
}

func (a *Admin) listMessages(ctx context.Context, in *WorkflowPath) (*body[apiv1.MessageList], error) {
	_, msgs, err := a.reads.Messages(ctx, in.ID, 0, 0)
	if err != nil {
		return nil, a.fail(ctx, "adminListMessages", err)
	}
	out := &body[apiv1.MessageList]{Body: apiv1.MessageList{Messages: make([]apiv1.MessageView, len(msgs))}}
	for i, m := range msgs {
		out.Body.Messages[i] = viewMessage(m)
	}
	return out, nil
}

func (a *Admin) listTraces(ctx context.Context, in *WorkflowPath) (*body[TraceList], error) {
	ts, err := a.reads.Traces(ctx, in.ID)
	if err != nil {
		return nil, a.fail(ctx, "adminListTraces", err)
	}
	out := &body[TraceList]{Body: TraceList{Traces: make([]TraceView, len(ts))}}
	for i, t := range ts {
		out.Body.Traces[i] = viewTrace(t)
	}
	return out, nil
}

func (a *Admin) getTrace(ctx context.Context, in *tracePath) (*body[TraceView], error) {
	t, err := a.reads.Trace(ctx, in.TraceID)
	if err != nil {
		return nil, a.fail(ctx, "adminGetTrace", err)
	}
	return &body[TraceView]{Body: viewTrace(t)}, nil
}

func (a *Admin) listTemplates(ctx context.Context, _ *struct{}) (*body[TemplateList], error) {
	set := a.prompts.Templates()
	out := &body[TemplateList]{Body: TemplateList{Templates: []TemplateView{}}}
	for _, name := range set.Names() {
		t, err := set.Get(name)
		if err != nil {
			return nil, a.fail(ctx, "adminListTemplates", workflow.WrapKind(workflow.KindInternal, err, "template %q", name))
		}
		out.Body.Templates = append(out.Body.Templates, TemplateView{Name: t.Name, Keys: t.Keys(), Source: t.Source})
	}
	return out, nil
}

// viewTrace is t as the admin API shows it: without the placeholder
// inputs it was rendered from, its prompt never null.
func viewTrace(t workflow.Trace) TraceView {
	v := wireOf[TraceView](t)
	v.Prompt = nonNil(v.Prompt)
	return v
}
