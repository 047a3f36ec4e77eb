package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/twostep/twostep/wiring"
)

// role is what one gateway process does: serve the API, run rounds, or
// both (the default).
type role struct {
	api     bool // serve the whole API; false: only /healthz, /readyz, /metrics
	workers bool // run rounds (the engine's workers and recovery scan)
}

// parseRole reads the subcommand's flags: `serve [--workers=0]` or
// `worker`. --workers=0 makes an API-only instance; any other value is
// refused (the worker count is limits.workers).
func parseRole(cmd string, args []string) (role, error) {
	switch cmd {
	case "worker":
		if len(args) > 0 {
			return role{}, fmt.Errorf("worker takes no arguments, got %q", strings.Join(args, " "))
		}
		return role{workers: true}, nil
	case "serve":
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		workers := fs.Int("workers", -1, "0: serve the API only, rounds run on worker instances")
		if err := fs.Parse(args); err != nil {
			return role{}, fmt.Errorf("serve: %w", err)
		}
		if fs.NArg() > 0 {
			return role{}, fmt.Errorf("serve takes no arguments, got %q", strings.Join(fs.Args(), " "))
		}
		if *workers != -1 && *workers != 0 {
			return role{}, errors.New("serve: --workers takes only 0 (API only); set the worker count with limits.workers")
		}
		return role{api: true, workers: *workers != 0}, nil
	}
	return role{}, fmt.Errorf("unknown command %q", cmd)
}

// check refuses a role that could never run a round: without Redis, rounds
// live in this process's memory, so the API and the workers must share it.
func (r role) check(cfg wiring.Config) error {
	if (!r.api || !r.workers) && cfg.RedisURL == "" {
		return errors.New("API-only and worker-only instances share rounds through Redis: set REDIS_URL")
	}
	return nil
}

// probeRoutes is the handler of a worker-only instance: h (the full API)
// answers /healthz, /readyz and /metrics; every other path is a 404
// problem.
func probeRoutes(h http.Handler) http.Handler {
	mux := http.NewServeMux()
	for _, p := range []string{"/healthz", "/readyz", "/metrics"} {
		mux.Handle(p, h)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"type":"about:blank","title":"Not Found","status":404,"detail":"this is a worker instance: it serves only /healthz, /readyz and /metrics"}`) //nolint:errcheck // best effort to a gone client
	})
	return mux
}
