package wiring

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/workflow"
)

// Run starts the gateway's background work under ctx: the engine's
// workers and the webhook deliverer when workers is set (every worker
// instance delivers the store's outbox), the watch that finishes the
// experiments of dead instances, and one probe of the model in the
// background (a wrong model name or key shows in the start-up log without
// delaying start-up on a slow provider). stop cancels it all and waits
// for it, running experiments stopped first; call it after the engine's
// Shutdown.
func (g *Gateway) Run(ctx context.Context, workers bool, log zerolog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var bg sync.WaitGroup
	if workers {
		g.Engine.Start(ctx)
	}
	if workers && g.Webhooks != nil {
		bg.Go(func() { g.Webhooks.Run(ctx) })
	}
	if g.Experiments != nil {
		bg.Go(func() { g.Experiments.Watch(ctx) })
	}
	if check := ModelCheck(g.Model); check != nil {
		bg.Go(func() {
			if err := check(ctx); err != nil && ctx.Err() == nil {
				log.Warn().Str("reason", workflow.PublicMessage(err)).Msg("the model does not answer its probe; rounds will fail until it does (see /readyz)")
			}
		})
	}
	return func() {
		cancel()
		if g.Experiments != nil {
			g.Experiments.Close()
		}
		bg.Wait()
	}
}

// HTTPServer is the gateway's HTTP server for handler: header and idle
// timeouts, log carried in every request's context, event streams ended
// on Shutdown.
func (g *Gateway) HTTPServer(handler http.Handler, log zerolog.Logger) *http.Server {
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return log.WithContext(context.Background()) },
	}
	srv.RegisterOnShutdown(g.API.CloseStreams)
	return srv
}

// StoreKind names the store cfg opens: "redis" or "memory".
func (c *Config) StoreKind() string {
	if c.RedisURL != "" {
		return "redis"
	}
	return "memory"
}

// ShutdownGrace is the engine's drain time after SIGTERM:
// limits.shutdownGrace, else engine.DefaultShutdownGrace.
func (c *Config) ShutdownGrace() time.Duration {
	if g := c.File.Limits.ShutdownGrace; g > 0 {
		return g
	}
	return engine.DefaultShutdownGrace
}
