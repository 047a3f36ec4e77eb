package budgets_test

import (
	"context"
	"errors"
	"slices"
	"strings"
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

// TestLimiter: reservations pass while the budget has room (the last one
// may cross it); once the settled usage reaches the budget a call is
// refused with when the budget resets, and from then on new work is
// refused too; settling gives back what a call did not use; users without
// a budget are not limited; prices count dollars.
func TestLimiter(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	var gauged workflow.Usage
	lim := &budgets.Limiter{
		Config: budgets.Config{Users: map[string]budgets.Limit{"ann": {Tokens: 1000, USD: 10, Period: budgets.Day}}},
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
	// 600 left: a call that may write more still goes; it crosses the budget.
	r, err = lim.Reserve(ctx, "ann", 4096)
	if err != nil {
		t.Fatalf("Reserve(4096) with 600 left = %v, want granted (the last call may cross the budget)", err)
	}
	lim.Settle(ctx, r, workflow.ModelUsage{Model: "m", PromptTokens: 300, OutputTokens: 400})
	_, err = lim.Reserve(ctx, "ann", 1)
	var be *workflow.BudgetError
	if !errors.As(err, &be) || !be.ResetsAt.Equal(time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)) || workflow.KindOf(err) != workflow.KindTooMany {
		t.Fatalf("Reserve(1) with 1100 of 1000 used = %v, want a budget error resetting at midnight", err)
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

// TestSmallBudgetMakesCalls (issue 45 item 2): a budget smaller than one
// call's possible output still lets calls run until it is used; a period
// with nothing used is never spent.
func TestSmallBudgetMakesCalls(t *testing.T) {
	ctx := context.Background()
	lim := &budgets.Limiter{
		Config: budgets.Config{Users: map[string]budgets.Limit{"ann": {Tokens: 2500, Period: budgets.Day}}},
		Store:  memstore.New(), Wait: -1,
	}
	calls := 0
	for ; calls < 10; calls++ {
		r, err := lim.Reserve(ctx, "ann", 900+4096)
		if err != nil {
			break
		}
		lim.Settle(ctx, r, workflow.ModelUsage{PromptTokens: 900, OutputTokens: 200})
	}
	if calls != 3 {
		t.Errorf("%d calls of 1100 tokens made with a budget of 2500, want 3 (the third crosses it)", calls)
	}
	used, _, _, _, err := lim.Usage(ctx, "ann")
	if err != nil || used.Tokens != 3300 || !used.Spent {
		t.Errorf("usage = %+v, %v; want 3300 tokens, spent", used, err)
	}
	if (budgets.Limit{Tokens: 2500, Period: budgets.Day}).Spent(workflow.Usage{Spent: true}) {
		t.Error("a counter marked spent with nothing used reads spent")
	}
	lim.Config.Users["cy"] = budgets.Limit{Tokens: 10, Period: budgets.Day}
	if _, err := lim.Reserve(ctx, "cy", 1<<20); err != nil {
		t.Errorf("first call against a budget of 10 tokens: %v, want granted", err)
	}
	if _, err := lim.Reserve(ctx, "cy", 1); err == nil {
		t.Error("second call while the first holds the budget: granted")
	}
	if used, _, _, _, _ := lim.Usage(ctx, "cy"); used.Spent || lim.Check(ctx, "cy") != nil {
		t.Errorf("nothing used yet: usage %+v reads spent", used)
	}
}

// TestOthersReservationsDoNotSpendTheBudget: calls under way hold the
// whole budget; a further call is refused (not waiting here), yet the
// period is not spent, and once the calls settle small new work and new
// calls go on.
func TestOthersReservationsDoNotSpendTheBudget(t *testing.T) {
	ctx := context.Background()
	lim := &budgets.Limiter{
		Config: budgets.Config{Users: map[string]budgets.Limit{"ann": {Tokens: 1000, Period: budgets.Month}}},
		Store:  memstore.New(), Wait: -1,
	}
	var held []workflow.BudgetReservation
	for range 10 {
		r, err := lim.Reserve(ctx, "ann", 100)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, r)
	}
	var be *workflow.BudgetError
	if _, err := lim.Reserve(ctx, "ann", 100); !errors.As(err, &be) {
		t.Fatalf("Reserve with the budget held by calls under way = %v, want a budget error", err)
	}
	if err := lim.Check(ctx, "ann"); err != nil {
		t.Errorf("Check with 0 of 1000 tokens used, 1000 reserved: %v, want nil", err)
	}
	for _, r := range held {
		lim.Settle(ctx, r, workflow.ModelUsage{PromptTokens: 5, OutputTokens: 5})
	}
	if err := lim.Check(ctx, "ann"); err != nil {
		t.Errorf("Check with 100 of 1000 tokens used: %v, want nil", err)
	}
	if _, err := lim.Reserve(ctx, "ann", 100); err != nil {
		t.Errorf("Reserve with 900 tokens left: %v", err)
	}
}

// TestReserveWaitsForOthersToSettle: a call refused only for others'
// reservations waits, backing off, and goes through once they settle; one
// that waits Wait out is refused, saying why, leaving the period unspent;
// a done context ends the wait with its cause.
func TestReserveWaitsForOthersToSettle(t *testing.T) {
	ctx := context.Background()
	var pauses []time.Duration
	var onSleep func()
	lim := &budgets.Limiter{
		Config: budgets.Config{Users: map[string]budgets.Limit{"ann": {Tokens: 1000, Period: budgets.Month}}},
		Store:  memstore.New(), Wait: 500 * time.Millisecond,
		Sleep: func(ctx context.Context, d time.Duration) error {
			pauses = append(pauses, d)
			if onSleep != nil {
				onSleep()
			}
			return ctx.Err()
		},
	}
	held, err := lim.Reserve(ctx, "ann", 1000)
	if err != nil {
		t.Fatal(err)
	}

	// Waited out: refused, saying the reservations hold the rest.
	_, err = lim.Reserve(ctx, "ann", 10)
	var be *workflow.BudgetError
	if !errors.As(err, &be) || !strings.Contains(be.What, "1000 tokens reserved by calls under way") {
		t.Fatalf("Reserve waited out = %v, want a budget error naming the reserved tokens", err)
	}
	want := []time.Duration{20, 40, 80, 160, 200}
	for i := range want {
		want[i] *= time.Millisecond
	}
	if !slices.Equal(pauses, want) {
		t.Errorf("pauses %v, want %v (doubling, up to Wait in all)", pauses, want)
	}
	if err := lim.Check(ctx, "ann"); err != nil {
		t.Errorf("Check after a call waited out: %v, want nil (nothing settled)", err)
	}

	// Cancelled while waiting.
	cctx, cancel := context.WithCancelCause(ctx)
	stop := errors.New("round stopped")
	onSleep = func() { cancel(stop) }
	if _, err := lim.Reserve(cctx, "ann", 10); errors.As(err, &be) || !errors.Is(err, context.Canceled) {
		t.Errorf("Reserve cancelled while waiting = %v, want the context's error, not a budget error", err)
	}

	// The holder settles while the call waits: it goes through.
	pauses = nil
	onSleep = func() { lim.Settle(ctx, held, workflow.ModelUsage{PromptTokens: 10}) }
	if _, err := lim.Reserve(ctx, "ann", 990); err != nil {
		t.Errorf("Reserve after the holder settled: %v", err)
	}
	if len(pauses) != 1 {
		t.Errorf("waited %d times, want 1", len(pauses))
	}
}

// TestLeakedReservationExpires: a reservation never settled (its instance
// died mid-call) stops counting after Hold.
func TestLeakedReservationExpires(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	lim := &budgets.Limiter{
		Config: budgets.Config{Users: map[string]budgets.Limit{"ann": {Tokens: 1000, Period: budgets.Month}}},
		Store:  memstore.New(), Wait: -1, Hold: time.Minute,
		Now: func() time.Time { return now },
	}
	if _, err := lim.Reserve(ctx, "ann", 1000); err != nil { // never settled
		t.Fatal(err)
	}
	if _, err := lim.Reserve(ctx, "ann", 1); err == nil {
		t.Fatal("Reserve while the leaked reservation counts: granted")
	}
	now = now.Add(time.Minute)
	if _, err := lim.Reserve(ctx, "ann", 1000); err != nil {
		t.Errorf("Reserve once the leaked reservation expired: %v", err)
	}
}
