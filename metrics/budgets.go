package metrics

import "github.com/prometheus/client_golang/prometheus"

// budgetRatios is the budget histogram (DESIGN §10.3). It has no user
// label: one series per user would grow without bound with JWT users, and
// a user's own figures are at /api/v1/usage (and every user's in the
// admin's economy report).
type budgetRatios struct {
	used *prometheus.HistogramVec
}

func newBudgetRatios(r *prometheus.Registry) budgetRatios {
	g := budgetRatios{
		used: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "twostep_budget_used_ratio",
			Help:    "The share of their budget's limit users had used at each reservation and settlement, by unit (tokens, usd); 1 and above: spent.",
			Buckets: []float64{0.1, 0.25, 0.5, 0.75, 0.9, 1, 1.5},
		}, []string{"unit"}),
	}
	r.MustRegister(g.used)
	return g
}

// BudgetUsage records one user's budget figures after a change — tokens
// and micro-dollars used and the limits (zero: none, nothing recorded for
// that unit) — as the share of the limit used, without the user.
func (m *Metrics) BudgetUsage(tokens, micros, limitTokens, limitMicros int64) {
	if limitTokens > 0 {
		m.budgets.used.WithLabelValues("tokens").Observe(float64(tokens) / float64(limitTokens))
	}
	if limitMicros > 0 {
		m.budgets.used.WithLabelValues("usd").Observe(float64(micros) / float64(limitMicros))
	}
}
