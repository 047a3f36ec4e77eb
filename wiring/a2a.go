package wiring

import (
	"github.com/rs/zerolog"

	"github.com/twostep/twostep/a2a"
	"github.com/twostep/twostep/actions"
	"github.com/twostep/twostep/httpapi"
	"github.com/twostep/twostep/webhooks"
	"github.com/twostep/twostep/workflow"
)

// a2aMount builds the A2A server (DESIGN §11.4) over the engine and
// returns its routes for httpapi: the agent card and /a2a. Push
// notifications need the store's webhook outbox.
func (g *Gateway) a2aMount(cfg Config, reg *actions.Registry, idem workflow.IdempotencyStore, log zerolog.Logger) (httpapi.Mount, error) {
	opts := a2a.Options{
		Engine: g.Engine, Reads: g.Engine, Actions: reg, Changes: g.Changes, Limits: cfg.File.Limits.HTTP,
		Idempotency: idem, Version: Version(), Logger: log.With().Str("component", "a2a").Logger(),
	}
	if o := workflow.StoreAs[workflow.WebhookOutbox](g.Store); o != nil {
		allow := cfg.File.Webhooks.AllowPrivate
		opts.CheckPushURL = func(u string) error { return webhooks.CheckURL(u, allow) }
		opts.Subscriptions = o
	}
	s, err := a2a.New(opts)
	if err != nil {
		return httpapi.Mount{}, err
	}
	return s.Mount(), nil
}
