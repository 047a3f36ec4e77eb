package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/rs/zerolog"
)

// Shutdown budget: in-flight requests get up to httpGrace, then running
// rounds stop at a checkpoint within what is left of shutdownBudget, so the
// process exits within 5 s of SIGTERM.
const (
	shutdownBudget = 4500 * time.Millisecond
	httpGrace      = 3 * time.Second
)

// serve runs the gateway until ctx is cancelled (SIGINT/SIGTERM), then
// shuts down gracefully: it stops accepting connections, lets in-flight
// requests finish, ends event streams, and stops running rounds at a
// checkpoint without changing their status, so the next start (or another
// instance sharing the Redis store) resumes them.
func serve(ctx context.Context, getenv func(string) string, stderr io.Writer) error {
	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	if len(cfg.Users) == 0 && len(cfg.Admins) == 0 && !cfg.InsecureDev {
		return errors.New("no tokens configured: set GATEWAY_TOKENS=userId:token,... (or GATEWAY_INSECURE_DEV=1 for local development only)")
	}
	log, err := newLogger(stderr, cfg.LogFormat, cfg.LogLevel)
	if err != nil {
		return err
	}
	if len(cfg.Users) == 0 && len(cfg.Admins) == 0 {
		log.Warn().Msg("GATEWAY_INSECURE_DEV=1 and no tokens: every request is user \"dev\" with admin rights; never run this way in production")
	}
	g, err := wire(ctx, cfg, log, nil)
	if err != nil {
		return err
	}
	defer g.close()

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on GATEWAY_ADDR %s: %w", cfg.Addr, err)
	}
	srv := &http.Server{
		Handler:           g.api.Routes(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return log.WithContext(context.Background()) },
	}
	srv.RegisterOnShutdown(g.api.CloseStreams)

	engineCtx, stopEngine := context.WithCancel(log.WithContext(context.Background()))
	defer stopEngine()
	g.engine.Start(engineCtx)
	log.Info().Str("addr", ln.Addr().String()).Str("store", storeKind(cfg)).Str("model", g.model.Name()).
		Str("version", version()).Msg("gateway listening")

	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	select {
	case err := <-serveErr:
		return fmt.Errorf("http server: %w", err)
	case <-ctx.Done():
	}
	return shutdown(srv, g, serveErr, log)
}

func shutdown(srv *http.Server, g *gateway, serveErr <-chan error, log zerolog.Logger) error {
	log.Info().Msg("shutting down: finishing in-flight requests")
	deadline := time.Now().Add(shutdownBudget)
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
	ectx, cancel2 := context.WithDeadline(context.Background(), deadline)
	defer cancel2()
	if err := g.engine.Shutdown(ectx); err != nil {
		errs = append(errs, fmt.Errorf("engine shutdown: %w", err))
	}
	if err := errors.Join(errs...); err != nil {
		log.Error().Err(err).Msg("shutdown was not clean")
		return err
	}
	log.Info().Msg("stopped")
	return nil
}

func storeKind(cfg Config) string {
	if cfg.RedisURL != "" {
		return "redis"
	}
	return "memory"
}
