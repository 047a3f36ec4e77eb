package wiring

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/twostep/twostep/economy"
)

// loadWithFile loads a configuration whose GATEWAY_CONFIG file is yaml.
func loadWithFile(t *testing.T, yaml string) (Config, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "gateway.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return LoadConfig(envOf(map[string]string{
		"GATEWAY_TOKENS": "alice:alice-token-000000001", "OPENAI_API_KEY": "k", "GATEWAY_CONFIG": path,
	}))
}

func TestPricesAreReadForTheEconomyReport(t *testing.T) {
	t.Parallel()
	cfg, err := loadWithFile(t, `prices:
  openai/gpt-4o-mini: {input: 0.15, cachedInput: 0.075, output: 0.6}
  anthropic/claude-sonnet-4-0: {input: 3, cachedInput: 0.3, output: 15}
`)
	if err != nil {
		t.Fatal(err)
	}
	want := economy.Prices{
		"openai/gpt-4o-mini":          {Input: 0.15, CachedInput: 0.075, Output: 0.6},
		"anthropic/claude-sonnet-4-0": {Input: 3, CachedInput: 0.3, Output: 15},
	}
	if diff := cmp.Diff(want, cfg.Prices()); diff != "" {
		t.Errorf("prices (-want +got):\n%s", diff)
	}
	if cfg, err := loadWithFile(t, "limits: {workers: 2}\n"); err != nil || cfg.Prices() != nil {
		t.Errorf("no prices section: %v, %v; want no prices (no built-in ones)", cfg.Prices(), err)
	}
}

// Every bad entry is reported at start, with the other problems.
func TestPricesProblems(t *testing.T) {
	t.Parallel()
	_, err := loadWithFile(t, `prices:
  gpt-4o: {input: 1, cachedInput: 0.1, output: 2}
  nope/m: {input: 1, cachedInput: 0.1, output: 2}
  openai/a: {input: -1, cachedInput: .nan, output: 2}
  openai/b: {input: 1, output: 2}
limits: {workers: -1}
`)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`"gpt-4o" must be "<provider>/<model>"`,
		`"nope/m" names provider "nope"`,
		`prices."openai/a".input must be a number of dollars ≥ 0, not -1`,
		`prices."openai/a".cachedInput must be a number of dollars ≥ 0, not NaN`,
		`prices."openai/b".cachedInput is missing`,
		"limits: values must not be negative",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// A dollar budget is accepted once the file has prices, and the budgets
// count a call's dollars with the economy's table: uncached input, cached
// input and output each at their price.
func TestDollarBudgetsUseThePriceTable(t *testing.T) {
	t.Parallel()
	cfg, err := loadWithFile(t, `prices:
  openai/gpt-4o: {input: 2, cachedInput: 0.5, output: 10}
budgets:
  users:
    alice: {usd: 5, period: day}
`)
	if err != nil {
		t.Fatalf("a usd budget with a price table: %v", err)
	}
	price := budgetPrices(cfg)
	if price == nil {
		t.Fatal("no price function with a price table")
	}
	// 1,000 uncached × $2 + 2,000 cached × $0.5 + 100 output × $10, per million.
	usd, ok := price("openai/gpt-4o", 1000, 2000, 100)
	if want := (1000*2.0 + 2000*0.5 + 100*10.0) / 1e6; !ok || usd != want {
		t.Errorf("price = %v, %v; want %v, true", usd, ok, want)
	}
	if _, ok := price("openai/gpt-4o-mini", 1, 0, 1); ok {
		t.Errorf("a model without a price was priced")
	}
}
