package wiring

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/twostep/twostep/actions"
	"github.com/twostep/twostep/actions/mcp"
	"github.com/twostep/twostep/actions/openapi"
	"github.com/twostep/twostep/approval"
	"github.com/twostep/twostep/changefeed"
	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/experiments"
	"github.com/twostep/twostep/httpapi"
	"github.com/twostep/twostep/llm"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/metrics"
	"github.com/twostep/twostep/modes/actionplan"
	"github.com/twostep/twostep/modes/react"
	"github.com/twostep/twostep/redact"
	"github.com/twostep/twostep/redisstore"
	"github.com/twostep/twostep/telemetry"
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
	actionModel := &telemetry.ActionModel{Model: g.Model} // traced once the tracer exists, below
	approvals, err := g.buildActions(ctx, cfg, log, actionModel)
	if err != nil {
		return err
	}
	l := cfg.File.Limits
	builder, err := cfg.promptBuilder()
	if err != nil {
		return err
	}
	grounded, _ := react.ParseGrounded(cfg.File.Stage2.RequireGrounded) // checked by LoadConfig
	plan := actionplan.New(builder, actionplan.Options{TopK: l.ActionPlanTopK, MaxReplans: l.maxReplans()})
	g.Store, g.Metrics = redact.Traces(g.Store, g.Redactor), metrics.New()

	hooks := g.webhooks(cfg, log)
	budget, usage := g.budgeter(cfg, log)
	tracer := g.Tel.Tracer(telemetry.Options{Redactor: g.Redactor, RequestModel: requestModel(g.Model)})
	actionModel.Tracer = tracer
	g.Engine, err = engine.New(engine.Config{
		DefaultMaxSteps: cfg.MaxSteps, MaxStepsLimit: engine.DefaultMaxStepsLimit, Workers: l.Workers,
		MaxRunningPerUser: l.MaxRunningPerUser, MaxQueuedPerUser: l.MaxQueuedPerUser, MaxForkBytes: l.MaxForkBytes, LeaseTTL: l.LeaseTTL, LoopRepeats: l.loopRepeats(),
		Dispatcher: g.Dispatcher, RecoverInterval: l.RecoverInterval,
		Approvals: approvals, ApprovalTimeout: l.ApprovalTimeout, ShutdownGrace: l.ShutdownGrace, Logger: log.With().Str("component", "engine").Logger(),
		Observer: g.Metrics, Changes: g.Changes, Deltas: g.Deltas, Tracer: tracer, Webhooks: hooks, Budget: budget,
	}, g.Store, g.Model, g.Registry, map[workflow.ModeName]workflow.Mode{
		workflow.ModeReact: react.New(builder, react.RequireGrounded(grounded), react.EarlyStage2(cfg.File.Stage2.earlyStart())), workflow.ModeActionPlan: plan,
	})
	if err != nil {
		return fmt.Errorf("engine.New: %w", err)
	}
	if err := g.buildExperiments(cfg, log, g.Registry, builder, g.Redactor, budget); err != nil {
		return err
	}
	return g.buildAPI(cfg, log, builder, plan, usage)
}

// buildActions builds the action registry (built-ins, HTTP actions, MCP
// servers' tools, OpenAPI operations), the redactor of every configured
// secret, and returns the approval policy over the registry.
func (g *Gateway) buildActions(ctx context.Context, cfg Config, log zerolog.Logger, actionModel workflow.Model) (*approval.Policy, error) {
	reg, err := actions.New(cfg.Actions, actionModel, actions.WithLogger(log.With().Str("component", "actions").Logger()),
		actions.WithSecrets(append(cfg.MCP.Secrets(), cfg.OpenAPI.Secrets()...)...))
	if err != nil {
		return nil, fmt.Errorf("actions.New: %w", err)
	}
	g.MCP = mcp.New(cfg.MCP, reg, mcp.Options{
		Logger: log.With().Str("component", "mcp").Logger(), Limits: cfg.Actions.Limits, Version: Version(),
	})
	g.OpenAPI = openapi.New(cfg.OpenAPI, reg, openapi.Options{Logger: log.With().Str("component", "openapi").Logger()})
	if err := g.OpenAPI.Load(ctx); err != nil {
		return nil, fmt.Errorf("GATEWAY_CONFIG: %w", err)
	}
	servers := make([]string, 0, len(cfg.MCP.Servers))
	for _, s := range cfg.MCP.Servers {
		servers = append(servers, s.Name)
	}
	approvals, err := approval.New(cfg.File.Approvals, reg, servers, cfg.OpenAPI.Names())
	if err != nil {
		return nil, fmt.Errorf("GATEWAY_CONFIG: %w", err)
	}
	g.Registry, g.Redactor = reg, redact.New(append(reg.Secrets(), cfg.Secrets()...)...)
	return approvals, nil
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
