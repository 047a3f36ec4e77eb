package wiring

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/twostep/twostep/economy"
	"github.com/twostep/twostep/llm"
)

// FilePrice is one entry of the YAML prices section (DESIGN §10.1): what
// a model charges in US dollars per million tokens. Every field is
// required: a price list without one of them would price it at 0.
type FilePrice struct {
	Input       *float64 `yaml:"input"`
	CachedInput *float64 `yaml:"cachedInput"`
	Output      *float64 `yaml:"output"`
}

// priceProviders are the providers a price may name: the model names the
// traces record are "<provider>/<model>" with one of them.
func priceProviders() []string {
	return []string{llm.ProviderOpenAI, llm.ProviderAnthropic, llm.ProviderGoogleAI, llm.ProviderOllama, llm.ProviderScripted}
}

// priceProblems reports the prices entries start-up must refuse: a key
// that is not "<provider>/<model>" with a known provider, a missing field,
// or a negative or non-finite value.
func (c *Config) priceProblems() []string {
	var out []string
	for _, key := range slices.Sorted(maps.Keys(c.File.Prices)) {
		p := c.File.Prices[key]
		provider, model, ok := strings.Cut(key, "/")
		switch {
		case !ok || model == "":
			out = append(out, fmt.Sprintf("prices: %q must be \"<provider>/<model>\", e.g. \"openai/gpt-4o-mini\"", key))
		case !slices.Contains(priceProviders(), provider):
			out = append(out, fmt.Sprintf("prices: %q names provider %q: it must be one of %s", key, provider, strings.Join(priceProviders(), ", ")))
		}
		for _, f := range []struct {
			name string
			v    *float64
		}{{"input", p.Input}, {"cachedInput", p.CachedInput}, {"output", p.Output}} {
			switch {
			case f.v == nil:
				out = append(out, fmt.Sprintf("prices.%q.%s is missing (US dollars per million tokens)", key, f.name))
			case *f.v < 0 || math.IsNaN(*f.v) || math.IsInf(*f.v, 0):
				out = append(out, fmt.Sprintf("prices.%q.%s must be a number of dollars ≥ 0, not %g", key, f.name, *f.v))
			}
		}
	}
	return out
}

// Prices returns the file's prices for the economy report; an entry with
// a missing field is left out (start-up refuses it anyway).
func (c *Config) Prices() economy.Prices {
	if len(c.File.Prices) == 0 {
		return nil
	}
	out := make(economy.Prices, len(c.File.Prices))
	for key, p := range c.File.Prices {
		if p.Input == nil || p.CachedInput == nil || p.Output == nil {
			continue
		}
		out[key] = economy.Price{Input: *p.Input, CachedInput: *p.CachedInput, Output: *p.Output}
	}
	return out
}
