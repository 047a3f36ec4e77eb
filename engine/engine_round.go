package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"time"

	"github.com/twostep/twostep/workflow"
)

// maxRoundGrow bounds the room runRound makes for a round's messages.
const maxRoundGrow = 64

// runRound drives wf's running round, whose messages are msgs (all of
// them, as read with wf), from its checkpoint until the round
// ends, the context is cancelled (Stop, Shutdown, a lost lease), the engine
// drains (Shutdown: the round stops after the phase in flight is committed)
// or the run loses the workflow to another writer. On cancellation it writes nothing:
// whoever cancelled has already committed what the status should be (Stop),
// or wants the round to stay running for a later resume (Shutdown). fence
// is the lease's fencing token: every commit of the run carries it, so the
// store refuses them once another instance has taken the round over; lease
// is the lease as this process knows it (no model call starts once it has
// ended). It
// returns the workflow as the run last committed or read it.
func (e *Engine) runRound(ctx context.Context, wf *workflow.Workflow, msgs []workflow.Message, fence int64, lease *runLease, intr *interruptSignal) (last *workflow.Workflow) {
	mode := e.modes[wf.Mode]
	var err error
	// Room for the round's messages (about one per step), so the run's
	// list is not grown, copying every message, as steps commit.
	msgs = slices.Grow(msgs, min(max(wf.MaxSteps-wf.Step, 0)+2, maxRoundGrow))
	upgradeCheckpoint(wf)
	if wf.Checkpoint == nil {
		wf.Checkpoint = &workflow.Checkpoint{Step: wf.Step, Phase: workflow.PhaseSelect}
	}
	run := &roundRun{e: e, mode: mode, wf: wf, msgs: msgs, fence: fence, lease: lease, intr: intr, stepStart: time.Now()}
	ctx, spans := e.startRoundSpan(ctx, run)
	if e.cfg.Budget != nil {
		ctx = workflow.WithModelGuard(ctx, run.guardActionModel)
	}
	defer func() {
		if p := recover(); p != nil { // a bug in a mode fails its round, not the process
			err = workflow.Errorf(workflow.KindInternal, "mode %s panicked: %v\n%s", wf.Mode, p, debug.Stack())
			e.failRound(ctx, run, err)
		}
		run.flushTraces(ctx)
		spans.end(err)
		last = run.wf
	}()
	if mode == nil {
		err = workflow.Errorf(workflow.KindInvalid, "mode %q is not available on this instance", wf.Mode)
		e.failRound(ctx, run, err)
		return
	}
	// A commit that ends the round may start a queued one: that round is
	// another run's (runClaimed schedules it).
	round := wf.Round
	for run.wf.Status == workflow.StatusRunning && run.wf.Round == round && ctx.Err() == nil && !e.runner.draining.Load() {
		version := run.wf.Version
		if run.interruptRequested() {
			// A safe point: the last phase is committed, the next not begun.
			err = run.endInterrupted(ctx)
		} else if run.wf.Checkpoint.Step > run.wf.MaxSteps {
			err = run.endAtLimit(ctx)
		} else {
			err = mode.Step(spans.stepContext(ctx, run), run)
		}
		if errors.Is(err, errInterrupted) {
			// A model call abandoned for an interrupting round: nothing of
			// it was committed; the round ends at this safe point.
			err = run.endInterrupted(ctx)
		}
		if err == nil && run.wf.Version == version {
			err = workflow.Errorf(workflow.KindInternal, "mode %s made no progress at phase %q", wf.Mode, run.wf.Checkpoint.Phase)
		}
		if err != nil {
			e.failRound(ctx, run, err)
			return
		}
	}
	return run.wf
}

// settle applies the round-ending rules to next, the state after a step
// whose messages are pending: next.Step is still the finished step and
// next.Checkpoint the position after it (the next step's number and
// phase). In this order:
//
//  1. end set by the mode (workflow.complete, plan_unavailable): that outcome;
//  2. MaxFailuresInARow failed steps in a row: status failed, stop reason
//     failures (Resume continues with the next step, the count reset);
//  3. the step repeated an earlier one of the round LoopRepeats times
//     (Repeats): a closing message saying so, status completed, stop
//     reason loop;
//  4. the step after the last allowed one: the mode's closing message is
//     appended (no model call), status completed, stop reason max_steps.
//
// A round that ends keeps Step at its last step (the limit, for max_steps);
// the failure breaker also keeps the checkpoint, so Resume goes on with the
// step after. A round that goes on moves Step to its checkpoint's. settle
// returns the messages to append. This is the one place both modes' rounds
// end by rule.
func (r *roundRun) settle(next *workflow.Workflow, end *workflow.RoundEnd, pending []workflow.Message) []workflow.Message {
	var loopText string
	if end == nil && len(pending) > 0 {
		loopText = r.loopEnd(next, pending)
	}
	switch {
	case end != nil:
		next.Status, next.StopReason, next.Error = end.Status, end.Reason, end.Error
		next.Checkpoint = nil
	case next.Checkpoint.Failures >= MaxFailuresInARow:
		next.Status, next.StopReason = workflow.StatusFailed, workflow.StopFailures
		next.Error = fmt.Sprintf("%d steps failed in a row", next.Checkpoint.Failures)
	case loopText != "":
		// Like a completed round's answer, the closing message gets the
		// step after the last one.
		closing := workflow.Message{ID: workflow.NewID(workflow.PrefixMessage), Role: workflow.RoleAssistant, Round: next.Round, Step: next.Checkpoint.Step,
			Text: loopText}
		next.Status, next.StopReason, next.Error = workflow.StatusCompleted, workflow.StopLoop, ""
		next.Checkpoint = nil
		return []workflow.Message{closing}
	case next.Checkpoint.Step > next.MaxSteps:
		next.Step = next.MaxSteps
		view := *r
		view.wf = next
		view.msgs = append(r.msgs[:len(r.msgs):len(r.msgs)], pending...)
		view.loops = workflow.LoopIndex{} // its own: the run's indexes only the run's messages
		closing := r.mode.Closing(&view)
		if closing.ID == "" {
			closing.ID = workflow.NewID(workflow.PrefixMessage)
		}
		// The closing message is not the last action's: like a completed
		// round's answer it gets the step after the last one.
		closing.Role, closing.Round, closing.Step = workflow.RoleAssistant, next.Round, next.MaxSteps+1
		next.Status, next.StopReason, next.Error = workflow.StatusCompleted, workflow.StopMaxSteps, ""
		next.Checkpoint = nil
		return []workflow.Message{closing}
	default:
		next.Step = next.Checkpoint.Step
	}
	return nil
}

// loopEnd is the closing text when the step committing pending repeated
// an earlier step of the round LoopRepeats times, else "".
func (r *roundRun) loopEnd(next *workflow.Workflow, pending []workflow.Message) string {
	limit := workflow.LoopLimit(r.e.cfg.LoopRepeats)
	if limit <= 0 {
		return ""
	}
	newest, earlier, ok := r.loops.Repeats(r.msgs, pending, next.Round)
	return workflow.StepRepeats{Newest: newest, Earlier: earlier, Found: ok}.LoopEnd(limit)
}

// endAtLimit ends a round whose position is past its last allowed step:
// Resume after the failure breaker ended the round at the last step, or a
// rejected approval of the last step. No step of the mode runs.
func (r *roundRun) endAtLimit(ctx context.Context) error {
	next := r.wf.Clone()
	msgs := r.settle(next, nil, nil)
	if err := r.commit(ctx, next, msgs, nil); err != nil {
		return err
	}
	r.published()
	return nil
}

// failRound records why a round could not go on. Nothing is written when
// the run was cancelled or lost the workflow, or the store is unavailable
// (the round stays running for recovery); a model error ends the round
// with stop reason llm_error; anything else with stop reason failures. The
// checkpoint is kept, so Resume continues from it.
func (e *Engine) failRound(ctx context.Context, run *roundRun, err error) {
	id := run.wf.ID
	switch {
	case ctx.Err() != nil:
		e.log.Debug().Str("workflow", id).AnErr("cause", context.Cause(ctx)).Msg("round interrupted")
		return
	case errors.Is(err, errRoundLost):
		e.log.Info().Str("workflow", id).AnErr("err", err).Msg("round changed elsewhere; leaving it")
		return
	case workflow.KindOf(err) == workflow.KindUnavailable && !errors.As(err, new(*modelError)):
		// A store outage is no failure of the round: it stays running and
		// the recovery scan resumes it from its checkpoint.
		e.log.Warn().Str("workflow", id).AnErr("err", err).Msg("store unavailable; round left for recovery")
		return
	}
	if be := (*workflow.BudgetError)(nil); errors.As(err, &be) {
		e.budgetStop(ctx, run, be)
		return
	}
	next := run.wf.Clone()
	next.Status = workflow.StatusFailed
	var me *modelError
	if errors.As(err, &me) {
		next.StopReason = workflow.StopLLMError
		next.Error = "the model could not answer: " + workflow.PublicMessage(me.err)
		e.log.Warn().Str("workflow", id).AnErr("err", err).Msg("round failed: model error")
	} else {
		next.StopReason = workflow.StopFailures
		next.Error = workflow.PublicMessage(err)
		e.log.Error().Str("workflow", id).AnErr("err", err).Msg("round failed")
	}
	if cerr := run.commit(ctx, next, nil, nil); cerr != nil {
		e.log.Error().Str("workflow", id).AnErr("err", cerr).Msg("recording the failed round failed")
		return
	}
	run.published()
}
