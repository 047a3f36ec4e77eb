package engine

import (
	"context"

	"github.com/twostep/twostep/templates/notices"
	"github.com/twostep/twostep/workflow"
)

// DefaultReservedOutput is the output a model call reserves when it sets
// no MaxTokens.
const DefaultReservedOutput = 4096

// estimateTokens is what a call may use at most, as far as the engine can
// tell before it: the prompt (about four characters a token, rounded up,
// plus a few tokens a message) and its whole output allowance.
func estimateTokens(call workflow.ModelCall) int64 {
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
