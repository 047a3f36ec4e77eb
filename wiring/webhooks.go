package wiring

import (
	"fmt"
	"github.com/twostep/twostep/a2a"
	"os"
	"slices"
	"time"

	"github.com/rs/zerolog"

	"github.com/twostep/twostep/httpapi"
	"github.com/twostep/twostep/redact"
	"github.com/twostep/twostep/webhooks"
	"github.com/twostep/twostep/workflow"
)

// FileWebhooks is the file's webhooks section (DESIGN §10.3).
type FileWebhooks struct {
	// AllowPrivate lets webhooks reach private and loopback addresses
	// (refused by default, like http.request's).
	AllowPrivate bool `yaml:"allowPrivate"`
	// Standing webhooks receive the events of one user's workflows, or of
	// every user's when User is empty.
	Standing []FileStandingWebhook `yaml:"standing"`
	// FirstRetry is the wait after a delivery's first failed attempt
	// (doubling after each next one, at most an hour); Poll how often each
	// instance looks for due deliveries. Both are for tests and tuning.
	FirstRetry time.Duration `yaml:"firstRetry"`
	Poll       time.Duration `yaml:"poll"`
	// Lease is how long one instance holds a delivery's attempt before
	// another may take it over (default 1m).
	Lease time.Duration `yaml:"lease"`
	// Concurrency is how many attempts one instance makes at once
	// (default webhooks.DefaultConcurrency), so one hanging receiver
	// does not hold up the others.
	Concurrency int `yaml:"concurrency"`
	// PerUser is how many of one user's deliveries are attempted at once,
	// across instances (default webhooks.DefaultPerUser): a user whose
	// receiver hangs holds that many attempt slots, not everyone's.
	PerUser int `yaml:"perUser"`
}

// FileStandingWebhook is one standing webhook. Secret may name an
// environment variable as ${NAME}; it is a secret (redacted, at least 8
// characters), in the Standard Webhooks form whsec_<base64> or any other.
type FileStandingWebhook struct {
	User   string   `yaml:"user"`
	URL    string   `yaml:"url"`
	Events []string `yaml:"events"`
	Secret string   `yaml:"secret"`
}

// resolveWebhooks expands the standing secrets' ${ENV} references.
func (w *FileWebhooks) resolve(lookup func(string) (string, bool)) {
	for i := range w.Standing {
		w.Standing[i].Secret = os.Expand(w.Standing[i].Secret, func(k string) string { v, _ := lookup(k); return v })
	}
}

// problems returns every problem of the section.
func (w FileWebhooks) problems() []string {
	var out []string
	for i, s := range w.Standing {
		at := fmt.Sprintf("webhooks.standing[%d]", i)
		if err := webhooks.CheckURL(s.URL, w.AllowPrivate); err != nil {
			out = append(out, fmt.Sprintf("%s.url: %v", at, err))
		}
		if why := redact.CheckSecret(s.Secret); why != "" {
			out = append(out, fmt.Sprintf("%s.secret %s", at, why))
		}
		for _, e := range s.Events {
			if !slices.Contains(workflow.WebhookEvents(), e) {
				out = append(out, fmt.Sprintf("%s.events: %q is not an event (want one of %v)", at, e, workflow.WebhookEvents()))
			}
		}
	}
	if w.FirstRetry < 0 || w.Poll < 0 || w.Lease < 0 || w.Concurrency < 0 || w.PerUser < 0 {
		out = append(out, "webhooks: firstRetry, poll, lease, concurrency and perUser must not be negative")
	}
	return out
}

// standing returns the standing webhooks for webhooks.Source.
func (w FileWebhooks) standing() []webhooks.Standing {
	out := make([]webhooks.Standing, len(w.Standing))
	for i, s := range w.Standing {
		out[i] = webhooks.Standing{User: s.User, Sub: workflow.WebhookSubscription{URL: s.URL, Events: s.Events, Secret: s.Secret}}
	}
	return out
}

// secrets returns the standing webhooks' secrets, for the redactor.
func (w FileWebhooks) secrets() []string {
	var out []string
	for _, s := range w.Standing {
		out = append(out, s.Secret)
	}
	return out
}

// outbox returns the store's webhook outbox, or nil.
func (g *Gateway) outbox() httpapi.WebhookDeliveries {
	if o := workflow.StoreAs[workflow.WebhookOutbox](g.Store); o != nil {
		return o
	}
	return nil
}

// webhooks makes the deliverer and returns the engine's webhook source
// (nil when the store keeps no outbox).
func (g *Gateway) webhooks(cfg Config, log zerolog.Logger) workflow.WebhookSource {
	o := workflow.StoreAs[workflow.WebhookOutbox](g.Store)
	if o == nil {
		return nil
	}
	w := cfg.File.Webhooks
	g.Webhooks = &webhooks.Deliverer{Outbox: o, AllowPrivate: w.AllowPrivate, FirstRetry: w.FirstRetry, Poll: w.Poll, Lease: w.Lease,
		Concurrency: w.Concurrency, PerUser: w.PerUser, Logger: log.With().Str("component", "webhooks").Logger()}
	return &webhooks.Source{Subscriptions: o, Standing: w.standing(),
		View:   func(wf *workflow.Workflow) any { return httpapi.ViewWorkflow(wf) },
		Bodies: map[string]func(string, *workflow.Workflow) ([]byte, error){workflow.WebhookFormatA2A: a2a.PushBody}}
}
