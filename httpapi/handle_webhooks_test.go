package httpapi

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/workflow"
)

// TestCreateWithWebhook: the create hands the engine the subscription
// with a fresh secret and answers that secret once; a refused URL is a
// 422 naming body.webhook.url and no workflow is made; without webhooks
// enabled a webhook is refused too.
func TestCreateWithWebhook(t *testing.T) {
	t.Parallel()
	hooks := WebhookOptions{
		CheckURL: func(u string) error {
			if strings.Contains(u, "127.0.0.1") {
				return errors.New("the webhook URL's address 127.0.0.1 is private or loopback")
			}
			return nil
		},
		NewSecret: func() string { return "whsec_dGVzdHNlY3JldA==" },
	}
	tests := []struct {
		name       string
		hooks      WebhookOptions
		webhook    map[string]any
		wantStatus int
		wantSecret string
		wantIn     string // in the problem's body
	}{
		{"accepted", hooks, map[string]any{"url": "https://hooks.example.com/in", "events": []string{"round.completed"}}, 201, "whsec_dGVzdHNlY3JldA==", ""},
		{"private address", hooks, map[string]any{"url": "http://127.0.0.1:9/in"}, 422, "", "body.webhook.url"},
		{"unknown event", hooks, map[string]any{"url": "https://hooks.example.com/in", "events": []string{"round.exploded"}}, 422, "", "round.exploded"},
		{"not enabled", WebhookOptions{}, map[string]any{"url": "https://hooks.example.com/in"}, 422, "", "not enabled"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newTestEnv(t, func(o *Options) { o.Webhooks = tc.hooks })
			var got engine.NewWorkflow
			env.engine.CreateFn = func(in engine.NewWorkflow) (*workflow.Workflow, error) {
				got = in
				return testWorkflow(in.UserID, workflow.StatusRunning), nil
			}
			rec := env.do(t, "POST", "/api/v1/workflows", aliceToken, map[string]any{"prompt": "go", "webhook": tc.webhook})
			if rec.Code != tc.wantStatus {
				t.Fatalf("status = %d, want %d: %s", rec.Code, tc.wantStatus, rec.Body)
			}
			if tc.wantIn != "" && !strings.Contains(rec.Body.String(), tc.wantIn) {
				t.Errorf("problem %s does not mention %q", rec.Body, tc.wantIn)
			}
			var body struct {
				WebhookSecret string `json:"webhookSecret"`
			}
			_ = json.Unmarshal(rec.Body.Bytes(), &body)
			if body.WebhookSecret != tc.wantSecret {
				t.Errorf("webhookSecret = %q, want %q", body.WebhookSecret, tc.wantSecret)
			}
			if tc.wantStatus != 201 {
				if got.UserID != "" {
					t.Errorf("the engine was asked to create %+v", got)
				}
				return
			}
			if got.Webhook == nil || got.Webhook.URL != tc.webhook["url"] || got.Webhook.Secret != tc.wantSecret ||
				len(got.Webhook.Events) != 1 {
				t.Errorf("engine got webhook %+v", got.Webhook)
			}
		})
	}
}
