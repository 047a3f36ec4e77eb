package httpapi

import (
	"context"
	"errors"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
	"github.com/rs/zerolog"

	"github.com/twostep/twostep/economy"
	"github.com/twostep/twostep/experiments"
	"github.com/twostep/twostep/modes/inspect"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/redact"
	"github.com/twostep/twostep/workflow"
)

// registerAdmin is the slot for the /admin/v1 routes of DESIGN §6 (traces,
// render, replay). They arrive through Options.Admin; the authenticate
// middleware already answers 401 without a token and 403 with a user token
// for every /admin path, registered or not, before any admin handler runs.
func (s *Server) registerAdmin(api huma.API) {
	if s.admin != nil {
		s.admin(api)
		s.registerAdminEvents(api)
	}
}

// PlanActionsFunc returns the actions the action-plan mode offers for a
// round's prompt (its top-K by keyword score) out of every registered one.
type PlanActionsFunc func(prompt string, all []workflow.ActionSpec) []workflow.ActionSpec

// AdminReads is what the admin routes read: any user's workflows, their
// messages, documents and traces. They never write. *engine.AdminReader
// (Engine.Admin) satisfies it.
type AdminReads interface {
	Get(ctx context.Context, id string) (*workflow.Workflow, error)
	List(ctx context.Context, userID string, p workflow.Page) ([]*workflow.Workflow, string, error)
	Messages(ctx context.Context, id string, after int64, limit int) (*workflow.Workflow, []workflow.Message, error)
	Document(ctx context.Context, wfID, docID string) (workflow.DocumentContent, error)
	Traces(ctx context.Context, id string) ([]workflow.Trace, error)
	Trace(ctx context.Context, traceID string) (workflow.Trace, error)
}

// AdminOptions wires the admin routes. Reads, Model, Registry and Prompts
// are required.
type AdminOptions struct {
	// Reads serves every read of the admin routes; pass the engine's
	// Admin().
	Reads AdminReads
	// Model answers replays. Pass the same model the engine uses.
	Model workflow.Model
	// Registry gives the actions, the connections of a workflow's user and
	// the parameter validation replays are parsed with.
	Registry workflow.Registry
	// Prompts must be the builder the modes render with, so a render is the
	// exact prompt the engine would send.
	Prompts *prompts.Builder
	// PlanActions selects the methods the plan stage offers; nil offers
	// every registered action.
	PlanActions PlanActionsFunc
	// Redactor scrubs secrets from everything the admin routes answer with
	// (renders, replays); nil redacts nothing.
	Redactor *redact.Redactor
	// CountTokens counts a text's tokens for the economy report's plain
	// loop; nil estimates a token per 4 characters.
	CountTokens func(string) int
	// DocumentText extracts a document's text for the plain loop's tool
	// results (document.extract's extraction); nil counts text/* documents
	// as is and others as empty.
	DocumentText func(workflow.DocumentContent) (string, error)
	// Prices prices the economy report's model calls (YAML prices); nil
	// reports no dollars.
	Prices economy.Prices
	// Deliveries lists webhook deliveries (the store's outbox); nil
	// leaves GET /admin/v1/webhooks/deliveries out.
	Deliveries WebhookDeliveries
	// Experiments runs the experiment routes; nil leaves them out (the
	// dataset route is always there).
	Experiments *experiments.Runner
}

// Admin serves the /admin/v1 routes and the trace viewer page. It never
// changes a workflow: render makes no model call, replay calls the model but
// stores nothing. It is safe for concurrent use.
type Admin struct {
	reads       AdminReads
	model       workflow.Model
	registry    workflow.Registry
	prompts     *prompts.Builder
	inspect     *inspect.Inspector
	redact      *redact.Redactor
	countTokens func(string) int
	docText     func(workflow.DocumentContent) (string, error)
	prices      economy.Prices
	deliveries  WebhookDeliveries
	experiments *experiments.Runner
}

// NewAdmin checks opts and returns the admin routes.
func NewAdmin(opts AdminOptions) (*Admin, error) {
	var errs []error
	if opts.Reads == nil {
		errs = append(errs, errors.New("opts.Reads is required"))
	}
	if opts.Model == nil {
		errs = append(errs, errors.New("opts.Model is required"))
	}
	if opts.Registry == nil {
		errs = append(errs, errors.New("opts.Registry is required"))
	}
	if opts.Prompts == nil {
		errs = append(errs, errors.New("opts.Prompts is required"))
	}
	if len(errs) > 0 {
		return nil, workflow.WrapKind(workflow.KindInvalid, errors.Join(errs...), "httpapi.NewAdmin")
	}
	return &Admin{
		reads: opts.Reads, model: opts.Model, registry: opts.Registry, prompts: opts.Prompts,
		inspect: inspect.New(inspect.Options{Reader: inspectReads{opts.Reads}, Registry: opts.Registry, Prompts: opts.Prompts, Offered: opts.PlanActions, Model: opts.Model}),
		redact:  opts.Redactor, countTokens: opts.CountTokens, docText: opts.DocumentText,
		prices:      opts.Prices,
		deliveries:  opts.Deliveries,
		experiments: opts.Experiments,
	}, nil
}

// Register adds the admin operations and the viewer page to api; pass it as
// Options.Admin.
func (a *Admin) Register(api huma.API) {
	a.registerPage(api)
	a.registerReads(api)
	a.registerRender(api)
	a.registerReplay(api)
	a.registerActions(api)
	a.registerEconomy(api)
	a.registerWebhooks(api)
	a.registerExperiments(api)
}

// adminOp returns the common shape of an admin operation.
func adminOp(id, method, path, summary string, errs ...int) huma.Operation {
	return huma.Operation{
		OperationID: id, Method: method, Path: path, Summary: summary, Tags: []string{"admin"},
		Errors: append([]int{http.StatusUnauthorized, http.StatusForbidden}, errs...),
	}
}

// fail maps err to the problem the admin sees, like Server.fail: the status
// of its kind, the caller-safe message, internal details logged only.
func (a *Admin) fail(ctx context.Context, op string, err error) error {
	status := StatusOf(err)
	msg := workflow.PublicMessage(err)
	if status >= 500 {
		zerolog.Ctx(ctx).Error().Err(err).Str("op", op).Msg("admin request failed")
		if status == http.StatusInternalServerError {
			msg = "internal error; the gateway log has the details"
		}
	}
	return huma.NewError(status, msg)
}

// inspectReads gives an inspection the admin's reads.
type inspectReads struct{ AdminReads }

func (r inspectReads) GetWorkflow(ctx context.Context, id string) (*workflow.Workflow, error) {
	return r.Get(ctx, id)
}

func (r inspectReads) Messages(ctx context.Context, id string, after int64, limit int) ([]workflow.Message, error) {
	_, msgs, err := r.AdminReads.Messages(ctx, id, after, limit)
	return msgs, err
}
