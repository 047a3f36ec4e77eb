package budgets_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twostep/twostep/budgets"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/workflow"
)

func TestWindow(t *testing.T) {
	now := time.Date(2026, 12, 31, 23, 59, 0, 0, time.FixedZone("x", 3600))
	tests := []struct {
		p             budgets.Period
		start, resets time.Time
	}{
		{budgets.Day, time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC), time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)},
		{budgets.Month, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)},
	}
	for _, tc := range tests {
		start, resets := tc.p.Window(now)
		if !start.Equal(tc.start) || !resets.Equal(tc.resets) {
			t.Errorf("%s.Window(%v) = %v, %v; want %v, %v", tc.p, now, start, resets, tc.start, tc.resets)
		}
	}
}

// TestLimiter: reservations pass until one could pass the budget; that
// one is refused with when the budget resets, and from then on new work is
// refused too; settling gives back what a call did not use; users without
// a budget are not limited; prices count dollars.
func TestLimiter(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	var gauged workflow.Usage
	lim := &budgets.Limiter{
		Config: budgets.Config{Users: map[string]budgets.Limit{"ann": {Tokens: 1000, USD: 1, Period: budgets.Day}}},
		Store:  memstore.New(), Now: func() time.Time { return now },
		Prices: func(model string, in, cached, out int) (float64, bool) {
			return float64(in+out) / 1000, model == "m" // a dollar per 1000 tokens
		},
		Gauge: func(_ string, u workflow.Usage, _ budgets.Limit) { gauged = u },
	}
	r, err := lim.Reserve(ctx, "ann", 600)
	if err != nil {
		t.Fatal(err)
	}
	lim.Settle(ctx, r, workflow.ModelUsage{Model: "m", PromptTokens: 300, OutputTokens: 100})
	if gauged.Tokens != 400 || gauged.Micros != 400000 {
		t.Errorf("after settling: %+v, want 400 tokens and $0.40", gauged)
	}
	if err := lim.Check(ctx, "ann"); err != nil {
		t.Errorf("Check with 600 tokens left: %v", err)
	}
	_, err = lim.Reserve(ctx, "ann", 601)
	var be *workflow.BudgetError
	if !errors.As(err, &be) || !be.ResetsAt.Equal(time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)) || workflow.KindOf(err) != workflow.KindTooMany {
		t.Fatalf("Reserve(601) with 600 left = %v, want a budget error resetting at midnight", err)
	}
	if err := lim.Check(ctx, "ann"); !errors.As(err, &be) {
		t.Errorf("Check after a refused call = %v, want the budget spent", err)
	}
	if _, err := lim.Reserve(ctx, "bob", 1<<40); err != nil {
		t.Errorf("a user without a budget: %v", err)
	}
	now = now.Add(24 * time.Hour)
	if err := lim.Check(ctx, "ann"); err != nil {
		t.Errorf("Check the next day: %v", err)
	}
}
