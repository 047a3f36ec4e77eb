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
	// a *BudgetError, reserving nothing, when the call could pass the
	// budget.
	Reserve(ctx context.Context, userID string, tokens int64) (BudgetReservation, error)
	// Settle replaces a reservation by what the call used (a zero
	// reservation just counts used); it never fails the caller.
	Settle(ctx context.Context, r BudgetReservation, used ModelUsage)
}

// DefaultReservedOutput is the output a model call reserves when it sets
// no MaxTokens.
const DefaultReservedOutput = 4096

// estimateTokens is what a call may use at most, as far as the engine can
// tell before it: the prompt (about four characters a token, rounded up,
// plus a few tokens a message) and its whole output allowance.
func estimateTokens(call ModelCall) int64 {
	n := 0
	for _, m := range call.Prompt {
		n += (len(m.Content)+3)/4 + 4
	}
	out := call.MaxTokens
	if out <= 0 {
		out = DefaultReservedOutput
	}
	return int64(n + out)
}

// checkBudget is Budgeter.Check when the engine has one.
func (e *Engine) checkBudget(ctx context.Context, userID string) error {
	if e.cfg.Budget == nil {
		return nil
	}
	return e.cfg.Budget.Check(ctx, userID)
}

// budgetStop ends run's round because its user's budget is spent: status
// stopped, stop reason budget, and an assistant message saying so (Resume
// goes on once the budget resets).
func (e *Engine) budgetStop(ctx context.Context, run *Run, be *BudgetError) {
	next := run.wf.Clone()
	next.Status, next.StopReason, next.Error = StatusStopped, StopBudget, be.Error()
	msg := Message{ID: NewID(PrefixMessage), Role: RoleAssistant, Round: next.Round, Step: next.Step,
		Text: "I stopped here: " + be.Error() + ". Resume the workflow after that to go on."}
	if err := run.commit(ctx, next, []Message{msg}, nil); err != nil {
		e.log.Error("recording the budget stop failed", "workflow", next.ID, "err", err)
		return
	}
	e.log.Info("round stopped: budget spent", "workflow", next.ID, "user", next.UserID)
	run.published()
}

// Usage is what a user's model calls used in one budget period: tokens
// and micro-dollars (millionths of a US dollar). Spent is set by the first
// reservation the counter refused: from then on the period's budget is
// spent, however little is left.
type Usage struct {
	Tokens, Micros int64
	Spent          bool
}

// UsageStore is the part of a store that counts usage for budgets. Each
// counter is one user's in one period (period names it, e.g. "d2026-11-27");
// it expires ttl after its last change. Both methods are atomic across
// instances sharing the store.
type UsageStore interface {
	// ReserveUsage adds add to the counter when the result stays within
	// limit (a zero field of limit: no limit on it) and returns the
	// counter after, with true; otherwise it adds nothing and returns the
	// counter as it is, marked Spent, with false.
	ReserveUsage(ctx context.Context, userID, period string, add, limit Usage, ttl time.Duration) (Usage, bool, error)
	// AddUsage adds add (a field may be negative: a reservation given
	// back) and returns the counter after.
	AddUsage(ctx context.Context, userID, period string, add Usage, ttl time.Duration) (Usage, error)
}
