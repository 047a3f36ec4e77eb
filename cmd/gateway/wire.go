package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/twostep/twostep/actions"
	"github.com/twostep/twostep/actions/mcp"
	"github.com/twostep/twostep/httpapi"
	"github.com/twostep/twostep/llm"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/modes/actionplan"
	"github.com/twostep/twostep/modes/react"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/redact"
	"github.com/twostep/twostep/redisstore"
	"github.com/twostep/twostep/telemetry"
	"github.com/twostep/twostep/templates"
	"github.com/twostep/twostep/workflow"
)

// namedModel is a model that can say which provider and model it is.
type namedModel interface {
	workflow.Model
	Name() string
}

// gateway is every wired component of one process.
type gateway struct {
	store workflow.Store // the redacting store everything uses
	raw   workflow.Store // the store under it
	// dispatcher is the Redis Streams dispatcher (nil with the memory
	// store: the engine's in-process one).
	dispatcher workflow.Dispatcher
	model      namedModel
	registry   *actions.Registry
	engine     *workflow.Engine
	api        *httpapi.Server
	metrics    *httpapi.Metrics
	redactor   *redact.Redactor // every configured secret, in every form
	mcp        *mcp.Manager     // the MCP servers' supervisors (started by serve)
	close      func() error     // releases the store's connections
	// tel is the OpenTelemetry setup (nil or off: no spans).
	tel *telemetry.Telemetry
}

// wire builds the gateway from cfg. model, when non-nil, replaces the
// configured provider (the demo's scripted model).
func wire(ctx context.Context, cfg Config, log zerolog.Logger, model namedModel) (*gateway, error) {
	return wireTraced(ctx, cfg, log, model, nil)
}

// wireTraced is wire with tracing: tel's spans for the engine and the HTTP
// requests (nil: none).
func wireTraced(ctx context.Context, cfg Config, log zerolog.Logger, model namedModel, tel *telemetry.Telemetry) (*gateway, error) {
	g := &gateway{close: func() error { return nil }, tel: tel}
	if err := g.openStore(ctx, cfg, log); err != nil {
		return nil, err
	}
	if model == nil {
		if err := g.openModel(ctx, cfg); err != nil {
			g.close()
			return nil, err
		}
	} else {
		g.model = model
	}
	if err := g.build(cfg, log); err != nil {
		g.close()
		return nil, err
	}
	return g, nil
}

// openStore connects to Redis when REDIS_URL is set, else uses memory. An
// unreachable Redis is an error naming the problem, never the URL (it may
// hold a password).
func (g *gateway) openStore(ctx context.Context, cfg Config, log zerolog.Logger) error {
	l := cfg.File.Limits
	if cfg.RedisURL == "" {
		g.raw = memstore.New(memstore.WithTraceCap(l.TraceCap), memstore.WithRetention(l.Retention))
		return nil
	}
	redis.SetLogger(redisLogger{log}) // go-redis has only a process-wide logger
	octx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	s, err := redisstore.Open(octx, cfg.RedisURL, redisstore.Options{TraceCap: l.TraceCap, Retention: l.Retention})
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
	g.raw, g.close, g.dispatcher = s, s.Close, d
	return nil
}

// openModel builds the configured provider's adapter; LLM_PROVIDER=scripted
// serves with the offline model, so the gateway can be tried without one.
func (g *gateway) openModel(ctx context.Context, cfg Config) error {
	if strings.EqualFold(cfg.LLMProvider, llm.ProviderScripted) {
		g.model = offlineModel{}
		return nil
	}
	if cfg.routed() {
		r, err := openRouter(ctx, cfg)
		if err != nil {
			return err
		}
		g.model = r
		return nil
	}
	m, err := llm.New(ctx, cfg.LLM())
	if err != nil {
		return fmt.Errorf("llm.New: %w", err)
	}
	g.model = m
	return nil
}

// modelCheck returns the model's token-free probe (llm.Model and
// llm.Router have one; the offline and scripted models do not need one).
func modelCheck(m any) func(context.Context) error {
	if p, ok := m.(interface{ Probe(context.Context) error }); ok {
		return p.Probe
	}
	return nil
}

// build wires registry, prompts, modes, engine and HTTP API over the
// opened store and model.
func (g *gateway) build(cfg Config, log zerolog.Logger) error {
	l := cfg.File.Limits
	actionModel := &telemetry.ActionModel{Model: g.model} // traced once the tracer exists, below
	reg, err := actions.New(cfg.Actions, actionModel, actions.WithLogger(log.With().Str("component", "actions").Logger()),
		actions.WithSecrets(cfg.MCP.Secrets()...))
	if err != nil {
		return fmt.Errorf("actions.New: %w", err)
	}
	g.mcp = mcp.New(cfg.MCP, reg, mcp.Options{
		Logger: log.With().Str("component", "mcp").Logger(), Limits: cfg.Actions.Limits, Version: version(),
	})
	var deps func() map[string]string
	if len(cfg.MCP.Servers) > 0 {
		deps = g.mcp.Status
	}
	approvals, err := actions.NewApprovals(cfg.File.Approvals, reg)
	if err != nil {
		return fmt.Errorf("GATEWAY_CONFIG: %w", err)
	}
	set, err := templates.Load(cfg.File.Templates.OverrideDir)
	if err != nil {
		return fmt.Errorf("templates.Load: %w", err)
	}
	builder := prompts.NewBuilder(set, prompts.Options{HistoryBudget: l.HistoryBudget, LoopRepeats: l.loopRepeats(),
		NoCompaction: l.Compaction != nil && !*l.Compaction})
	plan := actionplan.New(builder, actionplan.Options{TopK: l.ActionPlanTopK, MaxReplans: l.maxReplans()})
	redactor := redact.New(append(reg.Secrets(), cfg.Secrets()...)...)
	g.registry, g.store, g.metrics, g.redactor = reg, redact.Traces(g.raw, redactor), httpapi.NewMetrics(), redactor

	tracer := g.tel.Tracer(telemetry.Options{Redactor: redactor, RequestModel: requestModel(g.model)})
	actionModel.Tracer = tracer
	g.engine, err = workflow.NewEngine(workflow.EngineConfig{
		DefaultMaxSteps: cfg.MaxSteps, MaxStepsLimit: httpapi.MaxStepsLimit, Workers: l.Workers,
		MaxRunningPerUser: l.MaxRunningPerUser, LeaseTTL: l.LeaseTTL, LoopRepeats: l.loopRepeats(),
		Dispatcher: g.dispatcher, RecoverInterval: l.RecoverInterval,
		Approvals: approvals, ApprovalTimeout: l.ApprovalTimeout, ShutdownGrace: l.ShutdownGrace, Logger: slogFor(log.With().Str("component", "engine").Logger()),
		Observer: g.metrics, Tracer: tracer,
	}, g.store, g.model, reg, map[workflow.ModeName]workflow.Mode{
		workflow.ModeReact: react.New(builder), workflow.ModeActionPlan: plan,
	})
	if err != nil {
		return fmt.Errorf("workflow.NewEngine: %w", err)
	}
	admin, err := httpapi.NewAdmin(httpapi.AdminOptions{
		Store: g.store, Model: g.model, Registry: reg, Prompts: builder, Redactor: redactor,
		PlanActions: plan.Offered, CountTokens: (&llm.Tokenizer{}).Count, DocumentText: actions.DocumentText,
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
	g.api, err = httpapi.New(httpapi.Options{
		Engine: g.engine, Store: g.store, Actions: reg, Auth: auth, Limits: l.HTTP,
		Logger: log.With().Str("component", "http").Logger(), Metrics: g.metrics,
		ModelName: g.model.Name(), Models: modelNames(g.model), Version: version(), Admin: admin.Register,
		ModelCheck: modelCheck(g.model), Dependencies: deps, Tracing: g.tel.Middleware(),
	})
	if err != nil {
		return fmt.Errorf("httpapi.New: %w", err)
	}
	return nil
}

// requestModel names the model a stage's call goes to first
// ("provider/model"), for the model call spans' gen_ai.request.model.
func requestModel(m namedModel) func(workflow.Stage) string {
	if r, ok := m.(*llm.Router); ok {
		return func(s workflow.Stage) string { return r.Route(s).Name }
	}
	name := m.Name()
	return func(workflow.Stage) string { return name }
}
