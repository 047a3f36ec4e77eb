// Package budgets limits what each user's model calls spend (DESIGN
// §10.3): tokens and, with a price table, US dollars, per day or per
// month (UTC). Limiter is the engine's workflow.Budgeter: it reserves a
// call's possible tokens in the store before the call (one atomic step on
// any store, so instances sharing it cannot pass a budget together) and
// settles the reservation to what the call used.
package budgets

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/rs/zerolog"

	"github.com/twostep/twostep/workflow"
)

// Period is a budget's period: a UTC day or month.
type Period string

// The periods.
const (
	Day   Period = "day"
	Month Period = "month"
)

// Limit is one budget: at most Tokens tokens and USD dollars (0: no limit
// on it) per Period.
type Limit struct {
	Tokens int64
	USD    float64
	Period Period
}

// Config is the budgets of every user: Users' own, else Default.
type Config struct {
	Default *Limit
	Users   map[string]Limit
}

// For returns userID's budget, or false when the user has none.
func (c Config) For(userID string) (Limit, bool) {
	if l, ok := c.Users[userID]; ok {
		return l, true
	}
	if c.Default != nil {
		return *c.Default, true
	}
	return Limit{}, false
}

// Prices turns a call's tokens into dollars; ok is false for a model
// without prices (its calls then count no dollars).
type Prices func(model string, input, cachedInput, output int) (usd float64, ok bool)

// Gauge is told a user's usage after each change, for the metrics.
type Gauge func(userID string, used workflow.Usage, limit Limit)

// Limiter applies Config over a workflow.UsageStore.
type Limiter struct {
	Config Config
	Store  workflow.UsageStore
	// Prices is the price table (nil: no dollars are counted, and a USD
	// limit never trips).
	Prices Prices
	Gauge  Gauge
	// Logger receives the failures the limiter rides out; the zero
	// Logger discards them.
	Logger zerolog.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Hold is how long a reservation counts unless settled, so one made by
	// an instance that died mid-call stops counting (0: DefaultHold). It
	// should pass a call's timeout times its attempts.
	Hold time.Duration
	// Wait bounds how long Reserve waits, backing off, while a call is
	// refused only because other calls' reservations are outstanding
	// (0: DefaultWait; negative: no waiting).
	Wait time.Duration
	// Sleep waits d or until ctx is done (a timer when nil; tests fake it).
	Sleep func(ctx context.Context, d time.Duration) error
}

// The defaults of Limiter's Hold and Wait.
const (
	DefaultHold = 10 * time.Minute
	DefaultWait = 5 * time.Second
)

var _ workflow.Budgeter = (*Limiter)(nil)

// Window returns the start of the period holding now and the start of the
// next one (when the budget resets), in UTC.
func (p Period) Window(now time.Time) (start, resets time.Time) {
	now = now.UTC()
	if p == Month {
		start = time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
		return start, start.AddDate(0, 1, 0)
	}
	start = time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	return start, start.AddDate(0, 0, 1)
}

// key names a period's counter: "d2026-11-27" or "m2026-11".
func (p Period) key(start time.Time) string {
	if p == Month {
		return "m" + start.Format("2006-01")
	}
	return "d" + start.Format("2006-01-02")
}

func (l *Limiter) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

// micros is usd in micro-dollars, rounded up.
func micros(usd float64) int64 { return int64(math.Ceil(usd * 1e6)) }

func (lim Limit) usage() workflow.Usage {
	return workflow.Usage{Tokens: lim.Tokens, Micros: micros(lim.USD)}
}

// Spent reports whether used spends the budget: a model call of the
// period was refused for it (Usage.Spent), or its settled tokens or
// dollars reached it. Reservations of calls under way never spend it, and
// a period in which nothing was used is never spent (a counter marked by
// an earlier version, whose refusals counted reservations, reads unspent).
func (lim Limit) Spent(used workflow.Usage) bool {
	if used.Tokens <= 0 && used.Micros <= 0 {
		return false
	}
	return used.Spent || (lim.Tokens > 0 && used.Tokens >= lim.Tokens) || (lim.USD > 0 && used.Micros >= micros(lim.USD))
}

// spent returns the error for a used budget.
func (lim Limit) spent(resets time.Time) *workflow.BudgetError {
	what := "the "
	if lim.Period == Month {
		what += "monthly budget"
	} else {
		what += "daily budget"
	}
	switch {
	case lim.Tokens > 0 && lim.USD > 0:
		what += fmt.Sprintf(" of %d tokens and $%.2f", lim.Tokens, lim.USD)
	case lim.Tokens > 0:
		what += fmt.Sprintf(" of %d tokens", lim.Tokens)
	case lim.USD > 0:
		what += fmt.Sprintf(" of $%.2f", lim.USD)
	}
	return &workflow.BudgetError{What: what, ResetsAt: resets}
}

// ttl keeps a counter a day past its period.
func ttl(now, resets time.Time) time.Duration { return resets.Sub(now) + 24*time.Hour }

// Usage returns userID's usage of the current period, its budget (ok
// false: none) and when it resets.
func (l *Limiter) Usage(ctx context.Context, userID string) (used workflow.Usage, lim Limit, resets time.Time, ok bool, err error) {
	lim, ok = l.Config.For(userID)
	if !ok {
		return workflow.Usage{}, Limit{}, time.Time{}, false, nil
	}
	now := l.now()
	start, resets := lim.Period.Window(now)
	used, err = l.Store.AddUsage(ctx, userID, lim.Period.key(start), "", workflow.Usage{}, now, ttl(now, resets))
	return used, lim, resets, true, err
}

// Check returns a *workflow.BudgetError when userID's budget is spent: a
// model call of the period was refused for it, or its settled tokens or
// dollars are used up (reservations of calls under way do not count).
func (l *Limiter) Check(ctx context.Context, userID string) error {
	used, lim, resets, ok, err := l.Usage(ctx, userID)
	if err != nil || !ok {
		return err
	}
	if lim.Spent(used) {
		return lim.spent(resets)
	}
	return nil
}

// Reserve sets tokens aside in the current period, or refuses: the
// settled tokens and the reservations of calls under way leave no room
// (the call granted last may cross the budget), or its dollars are used up (dollars are known
// only after a call, so they are checked, not reserved). A call refused
// only because other calls' reservations are outstanding waits for them to
// settle, backing off up to Wait, and is then refused with that said.
func (l *Limiter) Reserve(ctx context.Context, userID string, tokens int64) (workflow.BudgetReservation, error) {
	lim, ok := l.Config.For(userID)
	if !ok {
		return workflow.BudgetReservation{}, nil
	}
	limit := lim.usage()
	if limit.Micros > 0 {
		limit.Micros-- // a call starts only while some dollars are left
	}
	id := workflow.NewID("res_")
	wait, waited, pause := l.Wait, time.Duration(0), 20*time.Millisecond
	if wait == 0 {
		wait = DefaultWait
	}
	for {
		now := l.now()
		start, resets := lim.Period.Window(now)
		key := lim.Period.key(start)
		hold := workflow.UsageHold{ID: id, Tokens: tokens, Now: now, Expires: now.Add(l.hold())}
		used, granted, err := l.Store.ReserveUsage(ctx, userID, key, hold, limit, ttl(now, resets))
		if err != nil {
			return workflow.BudgetReservation{}, fmt.Errorf("budgets: reserving %d tokens for %s: %w", tokens, userID, err)
		}
		l.gauge(userID, used, lim)
		if granted {
			return workflow.BudgetReservation{UserID: userID, Tokens: tokens, Key: key, ID: id}, nil
		}
		if used.Spent || waited >= wait {
			be := lim.spent(resets)
			if !used.Spent {
				be.What += fmt.Sprintf(" (with %d tokens reserved by calls under way, no room is left; waited %s for them)",
					used.Reserved, waited.Round(time.Millisecond))
			}
			return workflow.BudgetReservation{}, be
		}
		d := min(pause, wait-waited)
		if err := l.sleep(ctx, d); err != nil {
			return workflow.BudgetReservation{}, fmt.Errorf("budgets: waiting for %s's reservations to settle: %w", userID, err)
		}
		waited += d
		pause = min(2*pause, time.Second)
	}
}

func (l *Limiter) hold() time.Duration {
	if l.Hold > 0 {
		return l.Hold
	}
	return DefaultHold
}

func (l *Limiter) sleep(ctx context.Context, d time.Duration) error {
	if l.Sleep != nil {
		return l.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// Settle replaces the reservation by what the call used, in the period
// the reservation counted in.
func (l *Limiter) Settle(ctx context.Context, r workflow.BudgetReservation, used workflow.ModelUsage) {
	lim, ok := l.Config.For(r.UserID)
	if !ok {
		return
	}
	now := l.now()
	start, resets := lim.Period.Window(now)
	key := r.Key
	if key == "" {
		key = lim.Period.key(start)
	}
	add := workflow.Usage{Tokens: int64(used.PromptTokens + used.OutputTokens)}
	if l.Prices != nil {
		if usd, ok := l.Prices(used.Model, used.PromptTokens-used.CachedTokens, used.CachedTokens, used.OutputTokens); ok {
			add.Micros = micros(usd)
		}
	}
	after, err := l.Store.AddUsage(ctx, r.UserID, key, r.ID, add, now, ttl(now, resets))
	if err != nil {
		l.Logger.Warn().Str("user", r.UserID).AnErr("err", err).Msg("budgets: settling a model call failed; its reservation stays counted until it expires")
		return
	}
	l.gauge(r.UserID, after, lim)
}

func (l *Limiter) gauge(userID string, used workflow.Usage, lim Limit) {
	if l.Gauge != nil {
		l.Gauge(userID, used, lim)
	}
}
