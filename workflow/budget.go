package workflow

import (
	"context"
	"fmt"
	"time"
)

// StopBudget: the user's budget (DESIGN §10.3) was spent; the round
// stopped before the model call that would have passed it. Resume goes on
// once the budget's period has reset.
const StopBudget StopReason = "budget"

// BudgetError says a user's budget is spent until ResetsAt. It is of
// kind KindTooMany (HTTP 429, with Retry-After from ResetsAt).
type BudgetError struct {
	// What was spent, e.g. "the daily budget of 1000 tokens".
	What     string
	ResetsAt time.Time
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("%s is spent; it resets at %s", e.What, e.ResetsAt.UTC().Format(time.RFC3339))
}

// Unwrap gives the error its kind and caller-safe message.
func (e *BudgetError) Unwrap() error { return &Error{Kind: KindTooMany, Message: e.Error()} }

// BudgetReservation is what a Budgeter set aside for one model call.
type BudgetReservation struct {
	UserID string
	Tokens int64
	// Key is the Budgeter's own (the period the reservation counts in).
	Key string
	// ID is the Budgeter's own (names the reservation within its period).
	ID string
}

// ModelUsage is what one model call used, to settle its reservation.
type ModelUsage struct {
	Model                                    string
	PromptTokens, CachedTokens, OutputTokens int
}

// Budgeter limits what each user's model calls spend, across every
// instance sharing its store: Reserve is atomic (the reservation and the
// check are one step), so two instances cannot pass a budget together.
type Budgeter interface {
	// Check returns a *BudgetError when userID's budget is spent (before
	// new work: a create, a round, a resume).
	Check(ctx context.Context, userID string) error
	// Reserve sets tokens aside for one model call of userID, or returns
	// a *BudgetError, reserving nothing, when the budget has no room left
	// beside the calls under way (the call granted last may cross it).
	Reserve(ctx context.Context, userID string, tokens int64) (BudgetReservation, error)
	// Settle replaces a reservation by what the call used (a zero
	// reservation just counts used); it never fails the caller.
	Settle(ctx context.Context, r BudgetReservation, used ModelUsage)
}

// Usage is what a user's model calls used in one budget period: tokens
// and micro-dollars (millionths of a US dollar) of settled calls, and the
// tokens Reserved by calls still under way (held apart: they never mark
// the period spent). Spent is set by the first reservation refused because
// the settled usage alone leaves no room under the limit, so a period in
// which nothing was used is never spent.
type Usage struct {
	Tokens, Micros int64
	Reserved       int64
	Spent          bool
}

// UsageHold is one model call's reservation in a counter: ID names it
// (unique within the counter), Tokens is what it sets aside, and it stops
// counting at Expires unless settled first (an instance that died mid-call
// never settles it). Now is the caller's clock, used to drop expired holds.
type UsageHold struct {
	ID      string
	Tokens  int64
	Now     time.Time
	Expires time.Time
}

// UsageStore is the part of a store that counts usage for budgets. Each
// counter is one user's in one period (period names it, e.g. "d2026-11-27");
// it expires ttl after its last change. Every method is atomic across
// instances sharing the store, and each first drops the counter's holds
// expired at its now.
type UsageStore interface {
	// ReserveUsage records hold when the settled usage plus the live holds
	// stay below limit (a zero field of limit: no limit on it; dollars are
	// checked against the settled usage only): the hold itself may cross
	// the limit, so a budget is used up to it and the last call may pass
	// it by what it writes. It returns the counter after, with true.
	// Otherwise it records nothing and returns the counter with false; the
	// counter is marked Spent only when the settled usage alone reaches
	// limit (a refusal caused by other holds leaves it unspent, to be tried
	// again).
	ReserveUsage(ctx context.Context, userID, period string, hold UsageHold, limit Usage, ttl time.Duration) (Usage, bool, error)
	// AddUsage drops the hold named holdID (none when empty or already
	// expired) and adds used to the settled usage, returning the counter
	// after. AddUsage(…, "", Usage{}, …) just reads it.
	AddUsage(ctx context.Context, userID, period, holdID string, used Usage, now time.Time, ttl time.Duration) (Usage, error)
}

// ModelGuard is asked before a model call made outside a mode's own calls
// (an action's, e.g. ai.process): it reserves what the call may use in
// the budget of the user the call works for, or refuses with a
// *BudgetError (the call is not made); done settles the reservation to
// what the call used and must be called once the call returns.
type ModelGuard func(ctx context.Context, req ModelRequest) (done func(ModelResponse), err error)

type modelGuardKey struct{}

// WithModelGuard returns ctx carrying g, which GuardModelCall asks.
func WithModelGuard(ctx context.Context, g ModelGuard) context.Context {
	return context.WithValue(ctx, modelGuardKey{}, g)
}

// GuardModelCall asks ctx's ModelGuard (WithModelGuard) before a model
// call of req: a *BudgetError means the call must not be made; otherwise
// done must be called with the call's response (an empty one when it
// failed). Without a guard it allows the call and done does nothing.
func GuardModelCall(ctx context.Context, req ModelRequest) (done func(ModelResponse), err error) {
	if g, ok := ctx.Value(modelGuardKey{}).(ModelGuard); ok && g != nil {
		return g(ctx, req)
	}
	return func(ModelResponse) {}, nil
}
