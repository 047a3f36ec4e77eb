package wiring

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/twostep/twostep/actions"
	"github.com/twostep/twostep/actions/mcp"
	"github.com/twostep/twostep/actions/openapi"
	"github.com/twostep/twostep/agui"
	"github.com/twostep/twostep/approval"
	"github.com/twostep/twostep/changefeed"
	"github.com/twostep/twostep/doctext"
	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/experiments"
	"github.com/twostep/twostep/httpapi"
	"github.com/twostep/twostep/llm"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/metrics"
	"github.com/twostep/twostep/modes/actionplan"
	"github.com/twostep/twostep/modes/react"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/redact"
	"github.com/twostep/twostep/redisstore"
	"github.com/twostep/twostep/telemetry"
	"github.com/twostep/twostep/templates"
	"github.com/twostep/twostep/webhooks"
	"github.com/twostep/twostep/workflow"
)

// NamedModel is a model that can say which provider and model it is.
type NamedModel interface {
	workflow.Model
	Name() string
}

// Gateway is every wired component of one process.
type Gateway struct {
	// Store is the store everything uses: the opened store under the
	// trace redactor. Its capabilities (workflow.UsageStore,
	// workflow.WebhookOutbox ...) are found with workflow.StoreAs, which
	// looks under the wrappers.
	Store workflow.Store
	// Dispatcher is the Redis Streams dispatcher (nil with the memory
	// store: the engine's in-process one).
	Dispatcher workflow.Dispatcher
	Model      NamedModel
	Registry   *actions.Registry
	Engine     *engine.Engine
	API        *httpapi.Server
	Metrics    *metrics.Metrics
	Redactor   *redact.Redactor // every configured secret, in every form
	MCP        *mcp.Manager     // the MCP servers' supervisors (started by the caller)
	// OpenAPI holds the openapiActions documents, loaded by Wire; the
	// caller starts their refreshes and closes it.
	OpenAPI *openapi.Manager
	// Webhooks delivers the store's webhook outbox (nil when the store
	// keeps none); the caller runs it.
	Webhooks *webhooks.Deliverer
	// Tel is the OpenTelemetry setup (nil or off: no spans).
	Tel *telemetry.Telemetry
	// Experiments runs the admin's experiments (experiments.go); the
	// caller runs its Watch and closes it.
	Experiments *experiments.Runner
	// Changes is the change-notification service: the engine publishes
	// its commits, the API's waiting requests and event streams (and
	// tests) subscribe.
	Changes *changefeed.Feed
	// Deltas carries the deltas of streaming replies (DESIGN §11.3): in
	// process on the memory store, over Redis Pub/Sub between instances
	// on Redis. The engine publishes; event streams and AG-UI runs
	// subscribe.
	Deltas     DeltaTransport
	closeStore func() error // releases the store's connections
	// closeModel closes the models Wire opened (not one the caller passed
	// in): each ends its readiness probe in flight and waits for it.
	closeModel func() error
}

// DeltaTransport is where deltas are published and followed.
type DeltaTransport interface {
	workflow.Deltas
	httpapi.DeltaSource
}

// Close closes the models the gateway opened, waiting for their readiness
// probes in flight, and releases the store's connections.
func (g *Gateway) Close() error {
	return errors.Join(g.closeModel(), g.closeStore())
}

// Wire builds the gateway from cfg. model, when non-nil, replaces the
// configured provider (the demo's scripted model).
func Wire(ctx context.Context, cfg Config, log zerolog.Logger, model NamedModel) (*Gateway, error) {
	return WireTraced(ctx, cfg, log, model, nil)
}

// WireTraced is Wire with tracing: tel's spans for the engine and the HTTP
// requests (nil: none).
func WireTraced(ctx context.Context, cfg Config, log zerolog.Logger, model NamedModel, tel *telemetry.Telemetry) (*Gateway, error) {
	noop := func() error { return nil }
	g := &Gateway{closeStore: noop, closeModel: noop, Tel: tel, Changes: changefeed.New()}
	if err := g.openStore(ctx, cfg, log); err != nil {
		return nil, err
	}
	if model == nil {
		if err := g.openModel(ctx, cfg); err != nil {
			g.closeStore()
			return nil, err
		}
	} else {
		g.Model = model
	}
	if err := g.build(ctx, cfg, log); err != nil {
		_ = g.Close()
		return nil, err
	}
	return g, nil
}

// openStore connects to Redis when REDIS_URL is set, else uses memory. An
// unreachable Redis is an error naming the problem, never the URL (it may
// hold a password).
func (g *Gateway) openStore(ctx context.Context, cfg Config, log zerolog.Logger) error {
	l := cfg.File.Limits
	if cfg.RedisURL == "" {
		g.Store = memstore.New(memstore.WithTraceCap(l.TraceCap), memstore.WithRetention(l.Retention))
		g.Deltas = changefeed.NewDeltas()
		return nil
	}
	redis.SetLogger(redisLogger{log}) // go-redis has only a process-wide logger
	octx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	s, err := redisstore.Open(octx, cfg.RedisURL, redisstore.Options{KeyPrefix: cfg.RedisKeyPrefix, TraceCap: l.TraceCap, Retention: l.Retention})
	if err != nil {
		// redisstore.Open never quotes the URL (it may hold a password).
		if workflow.KindOf(err) == workflow.KindInvalid {
			return fmt.Errorf("REDIS_URL is unusable: %w", err)
		}
		return fmt.Errorf("redis is configured (REDIS_URL) but unreachable: %w", err)
	}
	if s.Cluster() {
		log.Info().Msg("redis store on a Redis Cluster (cluster client)")
	}
	d, err := s.Dispatcher(redisstore.DispatchOptions{Partitions: l.DispatchPartitions})
	if err != nil {
		_ = s.Close()
		return fmt.Errorf("GATEWAY_CONFIG: limits.dispatchPartitions: %w", err)
	}
	bus := s.Deltas()
	g.Store, g.Dispatcher, g.Deltas = s, d, bus
	g.closeStore = func() error { return errors.Join(bus.Close(), s.Close()) }
	return nil
}

// openModel builds the configured provider's adapter; LLM_PROVIDER=scripted
// serves with the offline model, so the gateway can be tried without one.
func (g *Gateway) openModel(ctx context.Context, cfg Config) error {
	if strings.EqualFold(cfg.LLMProvider, llm.ProviderScripted) {
		g.Model = newOfflineModel()
		return nil
	}
	if cfg.routed() {
		r, closeModels, err := openRouter(ctx, cfg)
		if err != nil {
			return err
		}
		g.Model, g.closeModel = r, closeModels
		return nil
	}
	m, err := llm.New(ctx, cfg.LLM())
	if err != nil {
		return fmt.Errorf("llm.New: %w", err)
	}
	g.Model, g.closeModel = m, m.Close
	return nil
}

// ModelCheck returns the model's token-free probe (llm.Model and
// llm.Router have one; the offline and scripted models do not need one).
func ModelCheck(m any) func(context.Context) error {
	if p, ok := m.(interface{ Probe(context.Context) error }); ok {
		return p.Probe
	}
	return nil
}

// build wires registry, prompts, modes, engine and HTTP API over the
// opened store and model.
func (g *Gateway) build(ctx context.Context, cfg Config, log zerolog.Logger) error {
	l := cfg.File.Limits
	actionModel := &telemetry.ActionModel{Model: g.Model} // traced once the tracer exists, below
	reg, err := actions.New(cfg.Actions, actionModel, actions.WithLogger(log.With().Str("component", "actions").Logger()),
		actions.WithSecrets(append(cfg.MCP.Secrets(), cfg.OpenAPI.Secrets()...)...))
	if err != nil {
		return fmt.Errorf("actions.New: %w", err)
	}
	g.MCP = mcp.New(cfg.MCP, reg, mcp.Options{
		Logger: log.With().Str("component", "mcp").Logger(), Limits: cfg.Actions.Limits, Version: Version(),
	})
	g.OpenAPI = openapi.New(cfg.OpenAPI, reg, openapi.Options{Logger: log.With().Str("component", "openapi").Logger()})
	if err := g.OpenAPI.Load(ctx); err != nil {
		return fmt.Errorf("GATEWAY_CONFIG: %w", err)
	}
	deps := dependencies(cfg, g.MCP, g.OpenAPI)
	servers := make([]string, 0, len(cfg.MCP.Servers))
	for _, s := range cfg.MCP.Servers {
		servers = append(servers, s.Name)
	}
	approvals, err := approval.New(cfg.File.Approvals, reg, servers, cfg.OpenAPI.Names())
	if err != nil {
		return fmt.Errorf("GATEWAY_CONFIG: %w", err)
	}
	set, err := templates.Load(cfg.File.Templates.OverrideDir)
	if err != nil {
		return fmt.Errorf("templates.Load: %w", err)
	}
	builder := prompts.NewBuilder(set, prompts.Options{HistoryBudget: l.HistoryBudget, LoopRepeats: l.loopRepeats(),
		NoCompaction: l.Compaction != nil && !*l.Compaction})
	grounded, _ := react.ParseGrounded(cfg.File.Stage2.RequireGrounded) // checked by LoadConfig
	plan := actionplan.New(builder, actionplan.Options{TopK: l.ActionPlanTopK, MaxReplans: l.maxReplans()})
	redactor := redact.New(append(reg.Secrets(), cfg.Secrets()...)...)
	g.Registry, g.Store, g.Metrics, g.Redactor = reg, redact.Traces(g.Store, redactor), metrics.New(), redactor

	hooks := g.webhooks(cfg, log)
	budget, usage := g.budgeter(cfg, log)
	tracer := g.Tel.Tracer(telemetry.Options{Redactor: redactor, RequestModel: requestModel(g.Model)})
	actionModel.Tracer = tracer
	g.Engine, err = engine.New(engine.Config{
		DefaultMaxSteps: cfg.MaxSteps, MaxStepsLimit: engine.DefaultMaxStepsLimit, Workers: l.Workers,
		MaxRunningPerUser: l.MaxRunningPerUser, LeaseTTL: l.LeaseTTL, LoopRepeats: l.loopRepeats(),
		Dispatcher: g.Dispatcher, RecoverInterval: l.RecoverInterval,
		Approvals: approvals, ApprovalTimeout: l.ApprovalTimeout, ShutdownGrace: l.ShutdownGrace, Logger: log.With().Str("component", "engine").Logger(),
		Observer: g.Metrics, Changes: g.Changes, Deltas: g.Deltas, Tracer: tracer, Webhooks: hooks, Budget: budget,
	}, g.Store, g.Model, reg, map[workflow.ModeName]workflow.Mode{
		workflow.ModeReact: react.New(builder, react.RequireGrounded(grounded)), workflow.ModeActionPlan: plan,
	})
	if err != nil {
		return fmt.Errorf("engine.New: %w", err)
	}
	if err := g.buildExperiments(cfg, log, reg, builder, redactor); err != nil {
		return err
	}
	admin, err := httpapi.NewAdmin(httpapi.AdminOptions{
		Reads: g.Engine.Admin(), Model: g.Model, Registry: reg, Prompts: builder, Redactor: redactor,
		PlanActions: plan.Offered, CountTokens: (&llm.Tokenizer{}).Count, DocumentText: doctext.PlainText,
		Prices:      cfg.Prices(),
		Deliveries:  g.outbox(),
		Experiments: g.Experiments,
	})
	if err != nil {
		return fmt.Errorf("httpapi.NewAdmin: %w", err)
	}
	var jwtv *httpapi.JWTVerifier
	if cfg.JWTJWKS != "" {
		if jwtv, err = httpapi.NewJWTVerifier(httpapi.JWTConfig{JWKS: cfg.JWTJWKS, Issuer: cfg.JWTIssuer,
			Audience: cfg.JWTAudience, AdminClaim: cfg.JWTAdminClaim}); err != nil {
			return err
		}
	}
	auth, err := httpapi.NewAuthenticator(cfg.Users, cfg.Admins, cfg.InsecureDev, jwtv)
	if err != nil {
		return err
	}
	// Idempotency-Key answers are kept beside the workflows, in the store
	// under the redactor (they hold only what the API answered).
	idem := workflow.StoreAs[workflow.IdempotencyStore](g.Store)
	ag, err := agui.New(agui.Options{Engine: g.Engine, Threads: idem, ThreadTTL: l.Retention, MaxBodyBytes: l.HTTP.MaxBodyBytes})
	if err != nil {
		return fmt.Errorf("agui.New: %w", err)
	}
	g.API, err = httpapi.New(httpapi.Options{
		Engine: g.Engine, Reads: g.Engine, Store: g.Store, Actions: reg, Auth: auth, Limits: l.HTTP, Idempotency: idem,
		Logger: log.With().Str("component", "http").Logger(), Metrics: g.Metrics,
		ModelName: g.Model.Name(), Models: modelNames(g.Model), Version: Version(), Admin: admin.Register,
		ModelCheck: ModelCheck(g.Model), Dependencies: deps, Tracing: httpapi.Tracing{Provider: g.Tel.Provider(), Propagator: telemetry.Propagator(), Service: telemetry.ServiceName},
		Webhooks: httpapi.WebhookOptions{
			CheckURL:  func(u string) error { return webhooks.CheckURL(u, cfg.File.Webhooks.AllowPrivate) },
			NewSecret: webhooks.NewSecret,
		},
		Usage: usage, Changes: g.Changes, Deltas: g.Deltas, Mounts: []httpapi.Mount{ag.Mount},
	})
	if err != nil {
		return fmt.Errorf("httpapi.New: %w", err)
	}
	return nil
}

// dependencies returns /readyz's extra checks: each MCP server and each
// openapiActions source (nil when there is none).
func dependencies(cfg Config, m *mcp.Manager, o *openapi.Manager) func() map[string]string {
	if len(cfg.MCP.Servers) == 0 && len(cfg.OpenAPI.Sources) == 0 {
		return nil
	}
	return func() map[string]string {
		out := m.Status()
		maps.Copy(out, o.Status())
		return out
	}
}

// requestModel names the model a stage's call goes to first
// ("provider/model"), for the model call spans' gen_ai.request.model.
func requestModel(m NamedModel) func(workflow.Stage) string {
	if r, ok := m.(*llm.Router); ok {
		return func(s workflow.Stage) string { return r.Route(s).Name }
	}
	name := m.Name()
	return func(workflow.Stage) string { return name }
}
