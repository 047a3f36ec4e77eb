// Command gateway serves twostep over HTTP (DESIGN §6–7).
//
//	gateway [serve]   run the HTTP gateway (the default)
//	gateway serve --workers=0  the API only (rounds run on worker instances)
//	gateway worker    run rounds only (HTTP: /healthz, /readyz, /metrics)
//	gateway demo [-v] run a sample workflow offline with a scripted model
//	gateway openapi   print the OpenAPI 3.1 document of the HTTP API
//	gateway qualify   score the configured models as Stage 1 and Stage 2
//	gateway version   print the version
//
// Configuration comes from the environment and the optional GATEWAY_CONFIG
// YAML file (package wiring reads it and builds the process); main adds the
// subcommands, listening, signals and shutdown.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/gin-gonic/gin"
	"github.com/rs/zerolog"

	"github.com/twostep/twostep/wiring"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := realMain(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "gateway: "+err.Error())
		stop()
		code := 1
		if ee := (*exitError)(nil); errors.As(err, &ee) {
			code = ee.code
		}
		os.Exit(code)
	}
}

// realMain runs one subcommand. Everything it needs from the process comes
// in as arguments, so tests can drive it.
func realMain(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	gin.SetMode(gin.ReleaseMode) // no route dump on stdout
	cmd := "serve"
	if len(args) > 0 {
		cmd, args = args[0], args[1:]
	}
	if slices.ContainsFunc(args, isHelp) {
		// "gateway demo --help" and the like: the usage, not a refusal.
		_, err := io.WriteString(stdout, usage)
		return err
	}
	if cmd == "serve" || cmd == "worker" {
		r, err := parseRole(cmd, args)
		if err != nil {
			return err
		}
		return serve(ctx, getenv, stderr, r)
	}
	if cmd == "qualify" {
		return runQualify(ctx, args, getenv, stdout)
	}
	if cmd == "demo" && len(args) == 1 && (args[0] == "-v" || args[0] == "--verbose") {
		return demo(ctx, getenv, stdout, stderr, true)
	}
	if len(args) > 0 {
		return fmt.Errorf("%s takes no arguments, got %q", cmd, strings.Join(args, " "))
	}
	switch cmd {
	case "demo":
		return demo(ctx, getenv, stdout, stderr, false)
	case "openapi":
		return printOpenAPI(ctx, stdout)
	case "version", "-version", "--version":
		_, err := fmt.Fprintln(stdout, "twostep gateway "+wiring.Version())
		return err
	case "help", "-h", "-help", "--help":
		_, err := io.WriteString(stdout, usage)
		return err
	default:
		return fmt.Errorf("unknown command %q; commands: serve (default), worker, demo, openapi, qualify, version", cmd)
	}
}

// isHelp reports whether a command-line argument asks for the usage.
func isHelp(arg string) bool {
	return arg == "help" || arg == "-h" || arg == "-help" || arg == "--help"
}

const usage = `usage: gateway [serve [--workers=0]|worker|demo [-v]|openapi|qualify [flags]|version]

  serve     run the HTTP gateway (default); configured by environment variables:
            GATEWAY_ADDR, REDIS_URL, REDIS_KEY_PREFIX, GATEWAY_TOKENS,
            GATEWAY_ADMIN_TOKENS, GATEWAY_METRICS_TOKEN, GATEWAY_INSECURE_DEV, GATEWAY_JWT_JWKS,
            GATEWAY_JWT_ISSUER, GATEWAY_JWT_AUDIENCE, GATEWAY_JWT_ADMIN_CLAIM,
            LLM_PROVIDER (scripted: an offline model, no provider needed),
            LLM_MODEL, LLM_MODEL_STAGE2, LLM_OUTPUT_MODE, OPENAI_BASE_URL,
            OPENAI_API_KEY, ANTHROPIC_API_KEY, GOOGLE_API_KEY, OLLAMA_BASE_URL,
            GATEWAY_CONFIG, GATEWAY_MAX_STEPS, LOG_LEVEL, LOG_FORMAT
            (README, Configuration; docs/configuration.md)
            --workers=0: serve the API only; worker instances run the rounds (needs REDIS_URL)
  worker    run rounds only, serving just /healthz, /readyz, /metrics on GATEWAY_ADDR
  demo      run a sample workflow offline (scripted model, real engine and actions)
            -v: also print the history each Stage 1 prompt rendered (newest first)
  openapi   print the OpenAPI 3.1 document of the HTTP API (as served at /openapi.json)
  qualify   run the built-in suite against the configured models and report, per stage, how
            well each follows the protocol (docs/qualify.md): --stage1 provider/model,
            --stage2 provider/model, --stage stage1|stage2, --cases FILE, --max-calls N,
            --concurrency N, --json, --min-score 0..1 (exit 1 below it; 2: a usage error)
  version   print the version
`

// printOpenAPI writes the HTTP API's OpenAPI document. It wires an offline
// gateway (memory store, offline model, nothing listening): the document
// depends on no configuration.
func printOpenAPI(ctx context.Context, stdout io.Writer) error {
	env := map[string]string{"GATEWAY_INSECURE_DEV": "1", "LLM_PROVIDER": "scripted"}
	cfg, err := wiring.LoadConfig(func(k string) string { return env[k] })
	if err != nil {
		return err
	}
	g, err := wiring.Wire(ctx, cfg, zerolog.Nop(), nil)
	if err != nil {
		return err
	}
	defer g.Close()
	doc, err := g.API.OpenAPI()
	if err != nil {
		return err
	}
	_, err = stdout.Write(append(doc, '\n'))
	return err
}
