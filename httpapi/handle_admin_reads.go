package httpapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/twostep/twostep/adminv1"
	"github.com/twostep/twostep/apiv1"
	"github.com/twostep/twostep/workflow"
)

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
func (a *Admin) listWorkflows(ctx context.Context, in *adminListInput) (*body[adminv1.AdminWorkflowList], error) {
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
	out := &body[adminv1.AdminWorkflowList]{Body: adminv1.AdminWorkflowList{Workflows: make([]adminv1.AdminWorkflowView, len(ws)), NextCursor: next}}
	for i, w := range ws {
		out.Body.Workflows[i] = adminView(w)
	}
	return out, nil
}

func adminView(w *workflow.Workflow) adminv1.AdminWorkflowView {
	return adminv1.AdminWorkflowView{WorkflowView: viewWorkflow(w), Checkpoint: viewCheckpoint(w.Checkpoint), TraceContext: adminv1.TraceContext(w.TraceContext)}
}

func (a *Admin) getWorkflow(ctx context.Context, in *WorkflowPath) (*body[adminv1.AdminWorkflowView], error) {
	w, err := a.reads.Get(ctx, in.ID)
	if err != nil {
		return nil, a.fail(ctx, "adminGetWorkflow", err)
	}
	return &body[adminv1.AdminWorkflowView]{Body: adminView(w)}, nil
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

func (a *Admin) listTraces(ctx context.Context, in *WorkflowPath) (*body[adminv1.TraceList], error) {
	ts, err := a.reads.Traces(ctx, in.ID)
	if err != nil {
		return nil, a.fail(ctx, "adminListTraces", err)
	}
	out := &body[adminv1.TraceList]{Body: adminv1.TraceList{Traces: make([]adminv1.TraceView, len(ts))}}
	for i, t := range ts {
		out.Body.Traces[i] = viewTrace(t)
	}
	return out, nil
}

func (a *Admin) getTrace(ctx context.Context, in *tracePath) (*body[adminv1.TraceView], error) {
	t, err := a.reads.Trace(ctx, in.TraceID)
	if err != nil {
		return nil, a.fail(ctx, "adminGetTrace", err)
	}
	return &body[adminv1.TraceView]{Body: viewTrace(t)}, nil
}

func (a *Admin) listTemplates(ctx context.Context, _ *struct{}) (*body[adminv1.TemplateList], error) {
	set := a.prompts.Templates()
	out := &body[adminv1.TemplateList]{Body: adminv1.TemplateList{Templates: []adminv1.TemplateView{}}}
	for _, name := range set.Names() {
		t, err := set.Get(name)
		if err != nil {
			return nil, a.fail(ctx, "adminListTemplates", workflow.WrapKind(workflow.KindInternal, err, "template %q", name))
		}
		out.Body.Templates = append(out.Body.Templates, adminv1.TemplateView{Name: t.Name, Keys: t.Keys(), Source: t.Source})
	}
	return out, nil
}

// viewTrace is t as the admin API shows it: without the placeholder
// inputs it was rendered from, its prompt never null.
func viewTrace(t workflow.Trace) adminv1.TraceView {
	v := wireOf[adminv1.TraceView](t)
	v.Prompt = nonNil(v.Prompt)
	return v
}
