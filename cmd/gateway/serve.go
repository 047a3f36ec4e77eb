package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/twostep/twostep/redact"
	"github.com/twostep/twostep/telemetry"
	"github.com/twostep/twostep/wiring"
)

// Shutdown budget: in-flight requests get up to httpGrace; then running
// rounds finish the phase in flight for up to limits.shutdownGrace, and
// whatever is still running after that stops at its checkpoint within
// cancelBudget.
const (
	cancelBudget = 1500 * time.Millisecond
	httpGrace    = 3 * time.Second
)

// serve runs the gateway until ctx is cancelled (SIGINT/SIGTERM), then
// shuts down gracefully: it stops accepting connections, lets in-flight
// requests finish, ends event streams, lets running rounds commit the phase
// in flight (up to limits.shutdownGrace) and stops them at that checkpoint
// without changing their status, so the next start (or another instance
// sharing the Redis store) resumes them.
func serve(ctx context.Context, getenv func(string) string, stderr io.Writer, r role) error {
	cfg, log, scrub, err := configure(getenv, stderr, r)
	if err != nil {
		return err
	}
	tel, err := telemetry.Setup(ctx, getenv, func(err error) { log.Warn().Err(err).Msg("opentelemetry") })
	if err != nil {
		return fmt.Errorf("set up tracing: %w", err)
	}
	if tel.Enabled() {
		log.Info().Bool("contentCapture", tel.CapturesContent()).Msg("OpenTelemetry tracing on")
	}
	g, err := wiring.WireTraced(ctx, cfg, log, nil, tel)
	if err != nil {
		return fmt.Errorf("wire the gateway: %w", err)
	}
	defer g.Close()
	defer flushTraces(tel, log)
	scrub.Store(g.Redactor)
	// MCP servers: started once per process (API and workers alike, as
	// both may list or run their tools); Start waits for each server's
	// first connection so reachable servers' tools are listed from the
	// first request. shutdown stops them after the engine.
	g.MCP.Start(ctx)
	defer g.MCP.Close()
	// openapiActions documents were loaded by Wire; URL ones refresh.
	g.OpenAPI.Start(ctx)
	defer g.OpenAPI.Close()
	return listen(ctx, cfg, g, log, r)
}

// configure loads the configuration, checks it for role r and builds the
// logger, whose redactor (scrub) knows the tokens and API keys until the
// gateway's own replaces it; it logs the configuration's warnings.
func configure(getenv func(string) string, stderr io.Writer, r role) (wiring.Config, zerolog.Logger, *atomic.Pointer[redact.Redactor], error) {
	cfg, err := wiring.LoadConfig(getenv)
	if err != nil {
		return cfg, zerolog.Nop(), nil, fmt.Errorf("load the configuration: %w", err)
	}
	if err := r.check(cfg); err != nil {
		return cfg, zerolog.Nop(), nil, fmt.Errorf("check the role: %w", err)
	}
	open, err := cfg.ApplyCredentialRule(r.api)
	if err != nil {
		return cfg, zerolog.Nop(), nil, fmt.Errorf("check the credentials: %w", err)
	}
	scrub := &atomic.Pointer[redact.Redactor]{}
	scrub.Store(redact.New(cfg.Secrets()...))
	log, err := wiring.NewLogger(stderr, cfg.LogFormat, cfg.LogLevel, scrub)
	if err != nil {
		return cfg, zerolog.Nop(), nil, fmt.Errorf("build the logger: %w", err)
	}
	if open {
		log.Warn().Msg("GATEWAY_INSECURE_DEV=1 and no tokens: every request is user \"dev\" with admin rights; never run this way in production")
	}
	for _, w := range cfg.Warnings() {
		log.Warn().Msg(w)
	}
	return cfg, log, scrub, nil
}

// listen serves g's routes for role r (a worker: the probes only) and
// runs its background work until ctx is cancelled, then shuts down.
func listen(ctx context.Context, cfg wiring.Config, g *wiring.Gateway, log zerolog.Logger, r role) error {
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on GATEWAY_ADDR %s: %w", cfg.Addr, err)
	}
	handler := g.API.Routes()
	if !r.api {
		handler = probeRoutes(handler)
	}
	srv := g.HTTPServer(handler, log)
	stop := g.Run(log.WithContext(context.Background()), r.workers, log)
	defer stop()
	if hint := cfg.OfflineHint(); hint != "" {
		log.Warn().Msg(hint)
	}
	log.Info().Str("addr", ln.Addr().String()).Str("store", cfg.StoreKind()).Str("model", g.Model.Name()).
		Bool("api", r.api).Bool("workers", r.workers).Str("version", wiring.Version()).Msg("gateway listening")
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	select {
	case err := <-serveErr:
		return fmt.Errorf("http server: %w", err)
	case <-ctx.Done():
	}
	return shutdown(srv, g, serveErr, log, cfg.ShutdownGrace())
}

func shutdown(srv *http.Server, g *wiring.Gateway, serveErr <-chan error, log zerolog.Logger, drain time.Duration) error {
	log.Info().Msg("shutting down: finishing in-flight requests")
	hctx, cancel := context.WithTimeout(context.Background(), httpGrace)
	defer cancel()
	var errs []error
	if err := srv.Shutdown(hctx); err != nil {
		errs = append(errs, fmt.Errorf("http shutdown: %w", err))
		_ = srv.Close()
	}
	if err := <-serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
		errs = append(errs, err)
	}
	ectx, cancel2 := context.WithTimeout(context.Background(), drain+cancelBudget)
	defer cancel2()
	if err := g.Engine.Shutdown(ectx); err != nil {
		errs = append(errs, fmt.Errorf("engine shutdown: %w", err))
	}
	_ = g.MCP.Close() // after the engine: no round calls a tool any more
	if err := errors.Join(errs...); err != nil {
		log.Error().Err(err).Msg("shutdown was not clean")
		return err
	}
	log.Info().Msg("stopped")
	return nil
}

// flushTraces exports the spans still buffered, within a few seconds.
func flushTraces(tel *telemetry.Telemetry, log zerolog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := tel.Shutdown(ctx); err != nil {
		log.Warn().Err(err).Msg("exporting the last spans failed")
	}
}
