package httpapi

import (
	"github.com/twostep/twostep/adminv1"
	"github.com/twostep/twostep/economy"
)

// viewEconomy is r as the admin route shows it (DESIGN §10.1).
func viewEconomy(r economy.Report) adminv1.EconomyView {
	out := adminv1.EconomyView{Steps: make([]adminv1.EconomyStep, len(r.Steps)), Totals: viewCost(r.Totals), PlainLoop: viewCost(r.PlainLoop), CostRatio: r.CostRatio}
	for i, s := range r.Steps {
		out.Steps[i] = adminv1.EconomyStep{Round: s.Round, Step: s.Step, Stage1: adminv1.EconomyTokens(s.Stage1), Stage2: adminv1.EconomyTokens(s.Stage2), Stage2Skipped: s.Stage2Skipped,
			Discarded: s.Discarded, LatencyMs: s.LatencyMs}
	}
	return out
}

// viewCost is c as the admin route shows it.
func viewCost(c economy.Cost) adminv1.EconomyCost {
	return adminv1.EconomyCost{Input: c.Input, Cached: c.Cached, Output: c.Output, USD: c.USD}
}
