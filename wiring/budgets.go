package wiring

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/rs/zerolog"

	"github.com/twostep/twostep/budgets"
	"github.com/twostep/twostep/economy"
	"github.com/twostep/twostep/httpapi"
	"github.com/twostep/twostep/llm"
	"github.com/twostep/twostep/workflow"
)

// FileBudgets is the file's budgets section (DESIGN §10.3): a default
// budget for every user and users' own.
type FileBudgets struct {
	Default *FileBudget           `yaml:"default"`
	Users   map[string]FileBudget `yaml:"users"`
}

// FileBudget is one budget: tokens and/or US dollars per day or month.
type FileBudget struct {
	Tokens int64   `yaml:"tokens"`
	USD    float64 `yaml:"usd"`
	Period string  `yaml:"period"`
}

func (b FileBudget) limit() budgets.Limit {
	return budgets.Limit{Tokens: b.Tokens, USD: b.USD, Period: budgets.Period(b.Period)}
}

// configured reports whether the section sets any budget.
func (f FileBudgets) configured() bool { return f.Default != nil || len(f.Users) > 0 }

// problems returns every problem of the section; prices says whether a
// price table counts dollars.
func (f FileBudgets) problems(prices bool) []string {
	var out []string
	check := func(at string, b FileBudget) {
		if b.Period != string(budgets.Day) && b.Period != string(budgets.Month) {
			out = append(out, fmt.Sprintf("%s.period must be day or month, not %q", at, b.Period))
		}
		if b.Tokens < 0 || b.USD < 0 || (b.Tokens == 0 && b.USD == 0) {
			out = append(out, at+": give tokens and/or usd, positive")
		}
		if b.USD > 0 && !prices {
			out = append(out, at+".usd needs a price table (prices:) to count dollars; this gateway has none")
		}
	}
	if f.Default != nil {
		check("budgets.default", *f.Default)
	}
	users := make([]string, 0, len(f.Users))
	for u := range f.Users {
		users = append(users, u)
	}
	sort.Strings(users)
	for _, u := range users {
		check(fmt.Sprintf("budgets.users[%q]", u), f.Users[u])
	}
	return out
}

func (f FileBudgets) config() budgets.Config {
	c := budgets.Config{Users: map[string]budgets.Limit{}}
	if f.Default != nil {
		l := f.Default.limit()
		c.Default = &l
	}
	for u, b := range f.Users {
		c.Users[u] = b.limit()
	}
	return c
}

// budgetPrices is the price table budgets count dollars with: the YAML
// prices: of DESIGN §10.1, the economy report's (nil without one, and
// dollar budgets are then refused at start). A call of a model without a
// price counts tokens only.
func budgetPrices(c Config) budgets.Prices {
	table := c.Prices()
	if len(table) == 0 {
		return nil
	}
	return func(model string, input, cachedInput, output int) (float64, bool) {
		p, ok := table[model]
		if !ok {
			return 0, false
		}
		return p.USD(economy.Tokens{Input: input + cachedInput, Cached: cachedInput, Output: output}), true
	}
}

// reservationHold is how long a model call's budget reservation counts
// unless settled: every attempt of the call at its timeout, every retry
// delay, and a minute's slack; past it, a reservation whose instance died
// mid-call stops counting.
func reservationHold(cfg Config) time.Duration {
	timeout := cfg.File.Limits.ModelTimeout
	if timeout <= 0 {
		timeout = llm.DefaultTimeout
	}
	return llm.DefaultMaxAttempts*(timeout+llm.DefaultMaxRetryDelay) + time.Minute
}

// budgeter returns the engine's Budgeter and the usage route's reader
// (both nil without budgets).
func (g *Gateway) budgeter(cfg Config, log zerolog.Logger) (workflow.Budgeter, httpapi.UsageReader) {
	store := workflow.StoreAs[workflow.UsageStore](g.Store)
	if store == nil || !cfg.File.Budgets.configured() {
		return nil, nil
	}
	prices := budgetPrices(cfg)
	lim := &budgets.Limiter{Config: cfg.File.Budgets.config(), Store: store, Prices: prices, Hold: reservationHold(cfg),
		Logger: log.With().Str("component", "budgets").Logger(),
		Gauge: func(_ string, used workflow.Usage, l budgets.Limit) {
			g.Metrics.BudgetUsage(used.Tokens, used.Micros, l.Tokens, int64(l.USD*1e6))
		}}
	read := func(ctx context.Context, userID string) (httpapi.UsageReport, bool, error) {
		used, l, resets, ok, err := lim.Usage(ctx, userID)
		if err != nil || !ok {
			return httpapi.UsageReport{}, ok, err
		}
		return httpapi.UsageReport{Period: string(l.Period), Used: used,
			Limit:    workflow.Usage{Tokens: l.Tokens, Micros: int64(l.USD * 1e6)},
			ResetsAt: resets, Dollars: prices != nil || l.USD > 0, Spent: l.Spent(used)}, true, nil
	}
	return lim, read
}
