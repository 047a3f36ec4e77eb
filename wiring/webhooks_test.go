package wiring

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestWebhooksAndBudgetsConfig: a good section loads, its standing secret
// (from the environment) joins the redacted secrets; every problem of a
// bad one is reported at once.
func TestWebhooksAndBudgetsConfig(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte(`webhooks:
  standing:
    - url: https://audit.example.com/hooks
      events: [round.completed]
      secret: ${HOOK_SECRET}
  concurrency: 4
  perUser: 3
budgets:
  default: {tokens: 1000, period: month}
  users:
    alice: {tokens: 50, period: day}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"GATEWAY_TOKENS": "a:a-token-00000000000001", "OPENAI_API_KEY": "k", "GATEWAY_CONFIG": good,
		"HOOK_SECRET": "whsec_c3RhbmRpbmctc2VjcmV0"}
	cfg, err := LoadConfig(envOf(env))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(cfg.Secrets(), "whsec_c3RhbmRpbmctc2VjcmV0") {
		t.Errorf("the standing webhook's secret is not among the redacted secrets")
	}
	if n := cfg.File.Webhooks.Concurrency; n != 4 {
		t.Errorf("webhooks.concurrency = %d, want 4", n)
	}
	if n := cfg.File.Webhooks.PerUser; n != 3 {
		t.Errorf("webhooks.perUser = %d, want 3", n)
	}
	if l, ok := cfg.File.Budgets.config().For("alice"); !ok || l.Tokens != 50 || l.Period != "day" {
		t.Errorf("alice's budget = %+v, %v", l, ok)
	}

	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte(`webhooks:
  standing:
    - url: http://127.0.0.1:9/hooks
      events: [round.exploded]
      secret: short
  concurrency: -1
budgets:
  default: {tokens: 1000, period: week}
  users:
    alice: {usd: 5, period: day}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	env["GATEWAY_CONFIG"] = bad
	_, err = LoadConfig(envOf(env))
	for _, want := range []string{
		"webhooks.standing[0].url", "private or loopback", `"round.exploded" is not an event`,
		"webhooks.standing[0].secret is 5 characters long", `budgets.default.period must be day or month, not "week"`,
		`budgets.users["alice"].usd needs a price table`, "concurrency and perUser must not be negative",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("LoadConfig(bad) = %v, want a problem containing %q", err, want)
		}
	}
}
