package wiring

import (
	"fmt"
	"maps"

	"github.com/rs/zerolog"

	"github.com/twostep/twostep/actions/mcp"
	"github.com/twostep/twostep/actions/openapi"
	"github.com/twostep/twostep/agui"
	"github.com/twostep/twostep/doctext"
	"github.com/twostep/twostep/httpapi"
	"github.com/twostep/twostep/llm"
	"github.com/twostep/twostep/modes/actionplan"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/telemetry"
	"github.com/twostep/twostep/webhooks"
	"github.com/twostep/twostep/workflow"
)

// buildAPI builds the HTTP API and its admin routes over the engine.
func (g *Gateway) buildAPI(cfg Config, log zerolog.Logger, builder *prompts.Builder, plan *actionplan.Mode, usage httpapi.UsageReader) error {
	admin, err := httpapi.NewAdmin(httpapi.AdminOptions{
		Reads: g.Engine.Admin(), Model: g.Model, Registry: g.Registry, Prompts: builder, Redactor: g.Redactor,
		PlanActions: plan.Offered, CountTokens: (&llm.Tokenizer{}).Count, DocumentText: doctext.PlainText,
		Prices:      cfg.Prices(),
		Deliveries:  g.outbox(),
		Experiments: g.Experiments,
	})
	if err != nil {
		return fmt.Errorf("httpapi.NewAdmin: %w", err)
	}
	auth, err := authenticator(cfg)
	if err != nil {
		return err
	}
	// Idempotency-Key answers are kept beside the workflows, in the store
	// under the redactor (they hold only what the API answered).
	idem := workflow.StoreAs[workflow.IdempotencyStore](g.Store)
	l := cfg.File.Limits
	ag, err := agui.New(agui.Options{Engine: g.Engine, Threads: idem, ThreadTTL: l.Retention, MaxBodyBytes: l.HTTP.MaxBodyBytes})
	if err != nil {
		return fmt.Errorf("agui.New: %w", err)
	}
	mount, err := g.a2aMount(cfg, g.Registry, idem, log)
	if err != nil {
		return fmt.Errorf("a2a.New: %w", err)
	}
	g.API, err = httpapi.New(httpapi.Options{
		Engine: g.Engine, Reads: g.Engine, Store: g.Store, Actions: g.Registry, Auth: auth, Limits: cfg.File.Limits.HTTP, Idempotency: idem,
		Logger: log.With().Str("component", "http").Logger(), Metrics: g.Metrics,
		MetricsToken: cfg.MetricsToken, MetricsOpen: cfg.MetricsOpen(),
		ModelName: g.Model.Name(), Models: modelNames(g.Model), Version: Version(), Admin: admin.Register,
		ModelCheck: ModelCheck(g.Model), Dependencies: dependencies(cfg, g.MCP, g.OpenAPI),
		Tracing: httpapi.Tracing{Provider: g.Tel.Provider(), Propagator: telemetry.Propagator(), Service: telemetry.ServiceName},
		Webhooks: httpapi.WebhookOptions{
			CheckURL:  func(u string) error { return webhooks.CheckURL(u, cfg.File.Webhooks.AllowPrivate) },
			NewSecret: webhooks.NewSecret,
		},
		Usage: usage, Changes: g.Changes, Deltas: g.Deltas, Mounts: []httpapi.Mount{mount},
		APIMounts: []httpapi.APIMount{ag.Mount},
	})
	if err != nil {
		return fmt.Errorf("httpapi.New: %w", err)
	}
	return nil
}

// authenticator checks the API's tokens and, with GATEWAY_JWT_JWKS, its
// JWTs.
func authenticator(cfg Config) (*httpapi.Authenticator, error) {
	var jwtv *httpapi.JWTVerifier
	if cfg.JWTJWKS != "" {
		var err error
		if jwtv, err = httpapi.NewJWTVerifier(httpapi.JWTConfig{JWKS: cfg.JWTJWKS, Issuer: cfg.JWTIssuer,
			Audience: cfg.JWTAudience, AdminClaim: cfg.JWTAdminClaim}); err != nil {
			return nil, err
		}
	}
	return httpapi.NewAuthenticator(cfg.Users, cfg.Admins, cfg.InsecureDev, jwtv)
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
