package wiring

import (
	"context"
	"io"
	"os"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/twostep/twostep/workflow"
	"github.com/twostep/twostep/workflow/storetest"
)

// TestEveryCapabilitySurvivesTheWrappers: the store the gateway wires
// (the opened store under the trace redactor) gives every capability of
// the store under it through workflow.StoreAs, and the features that read
// them are on: the webhook deliverer and the experiments runner. With
// REDIS_URL, on Redis too.
func TestEveryCapabilitySurvivesTheWrappers(t *testing.T) {
	t.Parallel()
	stores := map[string]map[string]string{"memory": {}}
	if url := os.Getenv("REDIS_URL"); url != "" {
		stores["redis"] = map[string]string{"REDIS_URL": url, "REDIS_KEY_PREFIX": "caps-" + workflow.NewID("t") + ":"}
	} else if os.Getenv("CI") != "" {
		t.Error("REDIS_URL is not set in CI")
	}
	for name, extra := range stores {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{"LLM_PROVIDER": "scripted", "GATEWAY_INSECURE_DEV": "1"}
			for k, v := range extra {
				env[k] = v
			}
			cfg, err := LoadConfig(envOf(env))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			g, err := Wire(ctx, cfg, zerolog.New(io.Discard), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			raw := g.Store
			for w, ok := raw.(workflow.StoreWrapper); ok; w, ok = raw.(workflow.StoreWrapper) {
				raw = w.Unwrap()
			}
			if raw == g.Store {
				t.Fatalf("the gateway's store %T wraps nothing: want the trace redactor over the opened store", g.Store)
			}
			storetest.Capabilities(t, g.Store, raw)
			if g.Webhooks == nil || g.Experiments == nil {
				t.Errorf("webhooks %v, experiments %v: want both on", g.Webhooks, g.Experiments)
			}
		})
	}
}
