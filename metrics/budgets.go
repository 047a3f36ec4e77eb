package metrics

import "github.com/prometheus/client_golang/prometheus"

// budgetGauges are the per-user budget gauges (DESIGN §10.3).
type budgetGauges struct {
	used, limit *prometheus.GaugeVec
}

func newBudgetGauges(r *prometheus.Registry) budgetGauges {
	g := budgetGauges{
		used: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "twostep_budget_used", Help: "What each user's current budget period used, by unit (tokens, usd), as this instance last saw it in the store.",
		}, []string{"user", "unit"}),
		limit: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "twostep_budget_limit", Help: "Each user's budget per period, by unit (tokens, usd); absent when the budget has no limit in that unit.",
		}, []string{"user", "unit"}),
	}
	r.MustRegister(g.used, g.limit)
	return g
}

// BudgetUsage sets userID's budget gauges: tokens and micro-dollars used,
// and the limits (zero: none, left unset).
func (m *Metrics) BudgetUsage(userID string, tokens, micros, limitTokens, limitMicros int64) {
	m.budgets.used.WithLabelValues(userID, "tokens").Set(float64(tokens))
	m.budgets.used.WithLabelValues(userID, "usd").Set(float64(micros) / 1e6)
	if limitTokens > 0 {
		m.budgets.limit.WithLabelValues(userID, "tokens").Set(float64(limitTokens))
	}
	if limitMicros > 0 {
		m.budgets.limit.WithLabelValues(userID, "usd").Set(float64(limitMicros) / 1e6)
	}
}
