package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humagin"
	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/metrics"
	"github.com/twostep/twostep/workflow"
)

// Engine is the part of *engine.Engine the HTTP layer drives. Every method
// scopes its work to userID and answers another user's workflow with an error
// of kind KindNotFound.
type Engine interface {
	Create(ctx context.Context, in engine.NewWorkflow) (*workflow.Workflow, error)
	StartRound(ctx context.Context, userID, id string, in engine.NewRound) (*workflow.Workflow, error)
	Stop(ctx context.Context, userID, id string) (*workflow.Workflow, error)
	Resume(ctx context.Context, userID, id string) (*workflow.Workflow, error)
	Get(ctx context.Context, userID, id string) (*workflow.Workflow, error)
	Delete(ctx context.Context, userID, id string) error
	Decide(ctx context.Context, userID, id, approvalID string, d workflow.Decision) (*workflow.Workflow, error)
	// Standing lists userID's standing approvals; RevokeStanding deletes
	// one (another user's is KindNotFound).
	Standing(ctx context.Context, userID string) ([]workflow.StandingApproval, error)
	RevokeStanding(ctx context.Context, userID, id string) error
	Fork(ctx context.Context, userID, id string, req engine.ForkRequest) (*workflow.Workflow, error)
}

// Reads is what the user routes read: the caller's own workflows, another
// user's answering KindNotFound exactly like an unknown id, and through
// Admin any user's for the admin event stream and the requests waiting
// for their round (Prefer: wait). *engine.Engine satisfies it, as does a *engine.Reader.
type Reads interface {
	Get(ctx context.Context, userID, id string) (*workflow.Workflow, error)
	List(ctx context.Context, userID string, p workflow.Page) ([]*workflow.Workflow, string, error)
	Messages(ctx context.Context, userID, id string, after int64, limit int) (*workflow.Workflow, []workflow.Message, error)
	MessagesOf(ctx context.Context, userID string, wf *workflow.Workflow, after int64, limit int) ([]workflow.Message, error)
	Document(ctx context.Context, userID, wfID, docID string) (workflow.DocumentContent, error)
	Admin() *engine.AdminReader
}

// ActionLister lists the registered actions for GET /api/v1/actions;
// *actions.Registry (any workflow.Registry) satisfies it.
type ActionLister interface {
	Actions() []workflow.ActionSpec
}

// AdminRoutes registers the /admin/v1 operations on api. The admin
// middleware (401 without a token, 403 with a user token) already guards
// every /admin path before these handlers run; handlers read the admin's id
// with UserFrom(ctx).
type AdminRoutes func(api huma.API)

// Options wires a Server. Engine, Reads, Store, Actions, Auth and Changes
// are required (New reports every one missing at once).
type Options struct {
	Engine Engine
	// Reads serves every read of a workflow, its messages and documents;
	// pass the engine.
	Reads Reads
	// Store is pinged by /readyz; it is not read.
	Store   Pinger
	Actions ActionLister
	Auth    *Authenticator
	Limits  Limits
	// Logger is the base logger; each request carries a child of it in its
	// context (zerolog.Ctx).
	Logger zerolog.Logger
	// Metrics is optional; nil disables /metrics and request counting.
	Metrics *metrics.Metrics
	// MetricsToken is the bearer token /metrics answers to
	// (GATEWAY_METRICS_TOKEN); nil: /metrics answers 401 saying how to set
	// one, unless MetricsOpen.
	MetricsToken *Credential
	// MetricsOpen serves /metrics without a token: for insecure
	// development mode only, where every route is open.
	MetricsOpen bool
	// ModelName names the configured model; /readyz fails while it is "".
	ModelName string
	// Models lists every configured model (stage models, fallbacks) for
	// /readyz; empty lists just ModelName.
	Models []string
	// ModelCheck, when set, tells /readyz whether the models answer (a
	// cached, token-free probe such as llm.Model.Probe). A failing check
	// makes /readyz report status "degraded" with the reason, still 200:
	// the API (listing, reading, stopping workflows) works without a model,
	// and one provider outage must not take every instance out of the
	// load balancer.
	ModelCheck func(context.Context) error
	// Dependencies, when set, reports optional dependencies (MCP servers,
	// as "mcp.<name>") by check name: "ok" or why one cannot be used. Any
	// that is not ok makes /readyz "degraded", still 200: the rest of the
	// gateway works without it.
	Dependencies func() map[string]string
	// Version is shown in the OpenAPI document.
	Version string
	// Admin registers the /admin/v1 routes (nil: none yet).
	Admin AdminRoutes
	// EventPoll is how often the events stream polls the store (0: 250ms);
	// Heartbeat how often an idle stream sends a comment (0: 15s).
	EventPoll time.Duration
	Heartbeat time.Duration
	// WriteTimeout bounds how long a response write may stay blocked on a
	// client that does not read (0: 2 minutes). It covers a whole ordinary
	// response and each frame of an event stream, so a stalled client
	// cannot hold a handler and its buffers forever.
	WriteTimeout time.Duration
	// Idempotency keeps the answers of requests sent with an
	// Idempotency-Key (DESIGN §10.3); pass the store. nil: the header is
	// ignored.
	Idempotency workflow.IdempotencyStore
	// Tracing, when its Provider is set, runs first on every request (the
	// OpenTelemetry server span, DESIGN §9.5), so the span covers auth and
	// limits too.
	Tracing Tracing
	// Webhooks enables the webhook of POST /api/v1/workflows (zero:
	// refused with 422).
	Webhooks WebhookOptions
	// Usage serves GET /api/v1/usage (nil: no budgets, 404).
	Usage UsageReader
	// Changes is the change-notification service the engine publishes
	// to: requests waiting for their round (Prefer: wait) and event
	// streams hear this instance's commits from it at once. Required.
	Changes workflow.Changes
	// Deltas, when set, lets event streams send the deltas of streaming
	// replies (DESIGN §11.3); nil: no delta events.
	Deltas DeltaSource
	// APIMounts register operations of packages beside this one (AG-UI)
	// on the API, after its own: they run behind the same middleware
	// (auth, limits, tracing) and appear in the OpenAPI document.
	APIMounts []APIMount
	// Mounts are protocols served beside /api by packages of their own
	// (the A2A server).
	Mounts []Mount
}

// DeltaSource follows the deltas of a workflow's streaming replies:
// changefeed.DeltaFeed in process, redisstore.DeltaBus across instances.
type DeltaSource interface {
	// SubscribeDeltas returns a channel of workflowID's deltas, bounded
	// (a reader that falls behind loses deltas), and the function that
	// ends the subscription.
	SubscribeDeltas(workflowID string) (<-chan workflow.Delta, func())
}

// APIMount registers operations on the API; the Server passed along
// offers what they share with this package (the error mapping, the
// approvals route's checks, the streams' closing).
type APIMount func(api huma.API, s *Server)

// Server is the HTTP API. It holds no per-request state and is safe for
// concurrent use.
type Server struct {
	engine    Engine
	reads     Reads
	store     Pinger
	actions   ActionLister
	auth      *Authenticator
	limits    Limits
	log       zerolog.Logger
	metrics   *metrics.Metrics
	metricsAt metricsGuard
	modelName string
	models    []string
	modelOK   func(context.Context) error
	deps      func() map[string]string
	version   string
	admin     AdminRoutes
	poll      time.Duration
	heartbeat time.Duration
	writeWait time.Duration
	tracing   gin.HandlerFunc
	idem      workflow.IdempotencyStore
	hooks     WebhookOptions
	usage     UsageReader
	mounts    []Mount
	userPaths map[string]bool

	handler http.Handler
	// inflight counts the request-body bytes held (capInflight).
	inflight *inflightGate
	// changes tells waiting requests and event streams of this
	// instance's commits.
	changes   workflow.Changes
	deltas    DeltaSource
	apiMounts []APIMount
	// waitPoll is how often a waiting request reads its workflow.
	waitPoll time.Duration
	oapi     *huma.OpenAPI

	// closing is closed by CloseStreams to end every event stream.
	closing   chan struct{}
	closeOnce sync.Once
}

// New validates opts and builds the routes.
func New(opts Options) (*Server, error) {
	var errs []error
	if opts.Engine == nil {
		errs = append(errs, errors.New("opts.Engine is required"))
	}
	if opts.Reads == nil {
		errs = append(errs, errors.New("opts.Reads is required"))
	}
	if opts.Store == nil {
		errs = append(errs, errors.New("opts.Store is required"))
	}
	if opts.Actions == nil {
		errs = append(errs, errors.New("opts.Actions is required"))
	}
	if opts.Auth == nil {
		errs = append(errs, errors.New("opts.Auth is required"))
	}
	if opts.Changes == nil {
		errs = append(errs, errors.New("opts.Changes is required"))
	}
	limits, err := opts.Limits.withDefaults()
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, workflow.WrapKind(workflow.KindInvalid, errors.Join(errs...), "httpapi.New")
	}
	s := &Server{
		engine: opts.Engine, reads: opts.Reads, store: opts.Store, actions: opts.Actions, auth: opts.Auth,
		limits: limits, log: opts.Logger, metrics: opts.Metrics, modelName: opts.ModelName, models: opts.Models, modelOK: opts.ModelCheck,
		deps:    opts.Dependencies,
		version: opts.Version, admin: opts.Admin, hooks: opts.Webhooks, usage: opts.Usage,
		changes: opts.Changes, deltas: opts.Deltas, apiMounts: opts.APIMounts, waitPoll: waitPoll,
		poll: orDefault(opts.EventPoll, 250*time.Millisecond), heartbeat: orDefault(opts.Heartbeat, 15*time.Second),
		writeWait: orDefault(opts.WriteTimeout, 2*time.Minute), tracing: opts.Tracing.middleware(),
		idem: opts.Idempotency, mounts: opts.Mounts, userPaths: userPathsOf(opts.Mounts),
		closing: make(chan struct{}), inflight: newInflightGate(limits),
	}
	s.metricsAt.open = opts.MetricsOpen
	if opts.MetricsToken != nil {
		sum := opts.MetricsToken.Sum()
		s.metricsAt.sum = &sum
	}
	if s.metrics != nil {
		// Registered once per registry; a second server on the same one
		// (tests) keeps the first's gauge.
		_ = s.metrics.Registry().Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "twostep_http_inflight_body_bytes",
			Help: "Request-body bytes received and not yet answered (limits.maxInflightUploadBytes caps them).",
		}, func() float64 { total, _ := s.inflight.held(""); return float64(total) }))
	}
	s.handler = s.buildRoutes()
	return s, nil
}

// OpenAPI returns the OpenAPI 3.1 document /openapi.json serves, as
// indented JSON (`gateway openapi` prints it; docs/openapi.json is it).
func (s *Server) OpenAPI() ([]byte, error) { return json.MarshalIndent(s.oapi, "", "  ") }

// Routes returns the HTTP handler serving every route.
func (s *Server) Routes() http.Handler { return s.handler }

// CloseStreams ends every open event stream (and any opened later) after
// its current frame, so http.Server.Shutdown need not wait for clients that
// never hang up. Register it with http.Server.RegisterOnShutdown. It is
// safe to call more than once.
func (s *Server) CloseStreams() {
	s.closeOnce.Do(func() {
		close(s.closing)
		for _, m := range s.mounts {
			if m.Close != nil {
				m.Close()
			}
		}
	})
}

func (s *Server) buildRoutes() http.Handler {
	r := gin.New()
	r.HandleMethodNotAllowed = true
	r.ContextWithFallback = true
	if s.tracing != nil {
		r.Use(s.tracing)
	}
	r.Use(s.recoverPanics(), s.observeRequests(), s.authenticate(), rejectMalformedQuery(), s.capInflight(), s.idempotency())
	r.NoRoute(func(c *gin.Context) {
		writeProblem(c, http.StatusNotFound, "no route matches "+c.Request.Method+" "+c.Request.URL.Path)
	})
	r.NoMethod(func(c *gin.Context) {
		writeProblem(c, http.StatusMethodNotAllowed, "method "+c.Request.Method+" is not allowed on "+c.Request.URL.Path)
	})

	api := humagin.New(r, s.humaConfig())
	s.registerHealth(r, api)
	s.registerWorkflows(api)
	s.registerUsage(api)
	s.registerRounds(api)
	s.registerApprovals(api)
	s.registerStanding(api)
	s.registerFork(api)
	s.registerMessages(api)
	s.registerDocuments(api)
	s.registerEvents(api)
	s.registerActions(api)
	s.registerAdmin(api)
	for _, m := range s.apiMounts {
		m(api, s)
	}
	s.mountRoutes(r)
	s.oapi = api.OpenAPI()
	completeOpenAPI(s.oapi)
	return r
}

func (s *Server) humaConfig() huma.Config {
	cfg := huma.DefaultConfig("twostep gateway", orDefaultString(s.version, "dev"))
	cfg.OpenAPIPath = "/openapi"
	cfg.DocsPath = ""
	cfg.SchemasPath = ""
	cfg.RejectUnknownQueryParameters = true
	// Drop the default $schema link transformer: responses keep exactly
	// the fields of DESIGN §6.
	cfg.CreateHooks = nil
	cfg.Info.Description = "Two-stage ReAct workflow engine. Every /api route needs `Authorization: Bearer <token>`."
	cfg.Components.SecuritySchemes = map[string]*huma.SecurityScheme{
		"bearer": {Type: "http", Scheme: "bearer"},
	}
	cfg.Security = []map[string][]string{{"bearer": {}}}
	cfg.Transformers = append(cfg.Transformers, problemFields, boundProblem)
	return cfg
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

func orDefaultString(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
