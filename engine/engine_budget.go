package engine

import (
	"context"
	"sync"

	"github.com/twostep/twostep/templates/notices"
	"github.com/twostep/twostep/workflow"
)

// DefaultReservedOutput is the output a model call reserves when it sets
// no MaxTokens and its stage has no recent reply to learn from.
const DefaultReservedOutput = 4096

// minReservedOutput is the least output a learned bound reserves.
const minReservedOutput = 64

// outputWindow is how many recent replies of a stage a bound learns from.
const outputWindow = 16

// estimateTokens is what a call may use at most, as far as the engine can
// tell before it: the prompt (about four characters a token, rounded up,
// plus a few tokens a message) and what it can write (outputBound).
func estimateTokens(call workflow.ModelCall, bounds *outputBounds) int64 {
	n := 0
	for _, m := range call.Prompt {
		n += (len(m.Content)+3)/4 + 4
	}
	return int64(n) + int64(bounds.bound(call.Stage, call.MaxTokens))
}

// outputBounds learns, per stage, how much its recent replies wrote: a
// call without MaxTokens reserves one and a half times the most one of
// its stage's last outputWindow replies wrote (at least
// minReservedOutput, at most DefaultReservedOutput), so a small budget is
// not held up by output no reply of that stage writes. It is safe for
// concurrent use; the zero value knows nothing (DefaultReservedOutput).
type outputBounds struct {
	mu     sync.Mutex
	recent map[workflow.Stage][]int
}

// bound is the output a call of stage with maxTokens (0: none) reserves.
func (b *outputBounds) bound(stage workflow.Stage, maxTokens int) int {
	if maxTokens > 0 {
		return maxTokens
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	most := 0
	for _, n := range b.recent[stage] {
		most = max(most, n)
	}
	if most == 0 {
		return DefaultReservedOutput
	}
	return min(max(most+most/2, minReservedOutput), DefaultReservedOutput)
}

// learn records what one reply of stage wrote.
func (b *outputBounds) learn(stage workflow.Stage, written int) {
	if written <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.recent == nil {
		b.recent = map[workflow.Stage][]int{}
	}
	r := append(b.recent[stage], written)
	if len(r) > outputWindow {
		r = r[len(r)-outputWindow:]
	}
	b.recent[stage] = r
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
// goes on once the budget resets). Rounds queued behind it stay queued,
// not started: each would only be refused in turn; they start once a
// round resumed or started after the reset ends.
func (e *Engine) budgetStop(ctx context.Context, run *roundRun, be *workflow.BudgetError) {
	next := run.wf.Clone()
	next.Status, next.StopReason, next.Error = workflow.StatusStopped, workflow.StopBudget, be.Error()
	msg := workflow.Message{ID: workflow.NewID(workflow.PrefixMessage), Role: workflow.RoleAssistant, Round: next.Round, Step: next.Step,
		Text: notices.BudgetStop(be.Error())}
	keepQueue := func(w *workflow.Workflow, m []workflow.Message) (*workflow.Workflow, []workflow.Message) { return w, m }
	if err := run.commitShaped(ctx, next, []workflow.Message{msg}, nil, keepQueue); err != nil {
		e.log.Error().Str("workflow", next.ID).AnErr("err", err).Msg("recording the budget stop failed")
		return
	}
	e.log.Info().Str("workflow", next.ID).Str("user", next.UserID).Msg("round stopped: budget spent")
	run.published()
}
