package engine

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/twostep/twostep/workflow"
)

// runOutcome is how a run of a round ended, for its deliveries.
type runOutcome int

const (
	// runLeft: the round may still be running, on another instance (the
	// lease was lost) or nowhere (the store failed); its deliveries stay
	// pending until Reclaim hands them out again.
	runLeft runOutcome = iota
	// runSettled: the round is not running (ended, paused, stopped,
	// deleted); its deliveries are done.
	runSettled
	// runBusy: another instance holds the round's lease.
	runBusy
	// runInterrupted: this instance stopped the running round at its
	// checkpoint (shutdown) and released the lease.
	runInterrupted
)

// takeover says how a run came to a round that may be another
// instance's: its entry was reclaimed from another consumer or left by
// one (from: that instance, when known), or the recovery scan found it.
type takeover struct {
	entry, scan bool
	from        string
}

// runClaimed runs id's round if this instance can claim its lease and the
// round is still running; the claim reads the workflow and its messages
// (ClaimRoundLoad: one round trip on Redis). While it runs, a watcher
// renews the lease and polls the status; after each renewal touch keeps
// the round's deliveries from being reclaimed. The lease is released when the run ends. A
// takeover of a running round is logged (see logTakeover); every claim is
// logged at debug level ("round claimed", with its fence).
//
// intr carries the request of an interrupting round queued on this
// instance; the watcher sets it for one queued elsewhere. A run whose
// last commit started a queued round schedules that round and reports
// runSettled.
func (e *Engine) runClaimed(ctx context.Context, id string, to takeover, touch func(context.Context), intr *interruptSignal) runOutcome {
	owner, ttl := e.cfg.InstanceID, e.cfg.LeaseTTL
	sent := time.Now() // the store's lease ends no earlier than sent + ttl
	claim, err := workflow.ClaimRoundLoad(ctx, e.store, id, owner, ttl)
	fence, wf, msgs := claim.Fence, claim.Workflow, claim.Messages
	switch {
	case workflow.KindOf(err) == workflow.KindNotFound:
		return runSettled
	case err != nil:
		if ctx.Err() == nil {
			e.log.Warn().Str("workflow", id).AnErr("err", err).Msg("claiming a round failed")
		}
		return runLeft
	case fence == 0:
		return runBusy
	}
	e.log.Debug().Str("workflow", id).Int64("fence", fence).Msg("round claimed")
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), commitTimeout)
		defer cancel()
		if err := e.store.ReleaseRound(rctx, id, owner); err != nil {
			e.log.Warn().Str("workflow", id).AnErr("err", err).Msg("releasing a round failed")
		}
	}()
	if wf.Status != workflow.StatusRunning {
		return runSettled
	}
	e.logTakeover(wf, fence, claim.Expired, to)
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	lease := newRunLease(sent, ttl, cancel)
	defer lease.stop()
	var wg sync.WaitGroup
	wg.Go(func() { e.watch(runCtx, cancel, id, fence, lease, touch, intr) })
	final := e.runRound(runCtx, wf, msgs, fence, lease, intr)
	cause := context.Cause(runCtx)
	cancel(nil)
	wg.Wait()
	switch {
	case final != nil && final.Status == workflow.StatusRunning && final.Round != wf.Round:
		// The round ended and a queued one started in the same commit.
		e.runner.schedule(ctx, id)
		return runSettled
	case final != nil && final.Status != workflow.StatusRunning,
		errors.Is(cause, errStopped), errors.Is(cause, errStoppedElsewhere):
		return runSettled
	case errors.Is(cause, errLeaseLost):
		return runLeft
	case e.runner.draining.Load() || errors.Is(cause, errShutdown):
		return runInterrupted
	}
	return runLeft
}

// logTakeover logs "round taken over" (info) when a claim that starts a
// run of wf, with fence, took the round over: the lease it took had run
// out unreleased in another owner's hands (expired), its entry was
// reclaimed from or left by another instance, or the recovery scan found
// it with work committed past its start (a round left by a shutdown). The
// line names the previous holder when known (from) and the cause. A round
// the scan finds at its start, with no expired lease, was merely queued
// (by an API-only instance): not a takeover, not logged.
func (e *Engine) logTakeover(wf *workflow.Workflow, fence int64, expired string, to takeover) {
	var cause, from string
	switch {
	case expired != "" && expired != e.cfg.InstanceID:
		cause, from = "lease expired", expired
	case to.entry:
		cause, from = "entry reclaimed", to.from
	case to.scan && progressed(wf):
		cause = "found by the recovery scan"
	default:
		return
	}
	ev := e.log.Info().Str("workflow", wf.ID).Int("round", wf.Round).Int("step", wf.Step).Int64("fence", fence)
	if from != "" {
		ev = ev.Str("from", from)
	}
	ev.Str("cause", cause).Msg("round taken over")
}

// watch keeps a running round's lease and notices a Stop or Delete made on
// another instance, and an interrupting round queued there (intr): every poll it re-reads the status and, every LeaseTTL/3,
// renews the lease. It cancels the run when the workflow is no longer
// running, or when its lease is no longer the one with the run's fence
// (another owner holds it, or it expired and the renewal took it anew, so
// the run's commits would be refused). Each renewal that kept the lease
// moves lease on and is followed by touch; a run whose renewals did not
// succeed for a whole LeaseTTL (the store is unreachable, or slow to
// answer: another instance may already have taken the round over) is
// cancelled by lease itself. Each renewal's context ends with the lease,
// and each touch's and status poll's when the next renewal is due, so on
// a store that honours deadlines no store call overruns the lease.
func (e *Engine) watch(ctx context.Context, cancel context.CancelCauseFunc, id string, held int64, lease *runLease, touch func(context.Context), intr *interruptSignal) {
	ttl := e.cfg.LeaseTTL
	renewEvery := ttl / 3
	tick := min(e.cfg.PollInterval, renewEvery)
	t := time.NewTicker(tick)
	defer t.Stop()
	lastTried := lease.since()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := time.Now()
		// Half a tick of slack: after a tick handled late, the next one
		// comes less than a period after it, and must not push the
		// renewal to the tick after (with tick == renewEvery that made
		// renewals 2×renewEvery apart, a third of the lease to spare).
		if now.Sub(lastTried) >= renewEvery-tick/2 {
			lastTried = now
			// A renewal waits for its answer no longer than the lease it
			// renews lasts: past its end the run is over anyway.
			rctx, rcancel := context.WithDeadline(ctx, lease.end())
			fence, err := e.store.ClaimRound(rctx, id, e.cfg.InstanceID, ttl)
			rcancel()
			switch {
			case err == nil && fence != held:
				// Another owner holds the lease (0), or it expired and this
				// claim took it anew: the run's fence is stale either way,
				// so its next commit would be refused.
				cancel(errLeaseLost)
				return
			case err == nil:
				lease.renewed(now)
				if touch != nil { // no later than the next renewal is due
					tctx, tcancel := context.WithDeadline(ctx, now.Add(renewEvery))
					touch(tctx)
					tcancel()
				}
			}
		}
		if ctx.Err() != nil {
			return
		}
		// The poll waits no longer than until the next renewal is due, so
		// a slow store never puts a renewal off.
		pctx, pcancel := context.WithDeadline(ctx, lastTried.Add(renewEvery))
		wf, err := e.store.GetWorkflow(pctx, id)
		pcancel()
		if (err == nil && wf.Status != workflow.StatusRunning) || workflow.KindOf(err) == workflow.KindNotFound {
			cancel(errStoppedElsewhere)
			return
		}
		if err == nil && wf.Interrupting() {
			intr.request() // a round queued elsewhere interrupts this one
		}
	}
}

// runLease is the lease a run holds as this process knows it: it ends
// LeaseTTL after the claim or renewal that last kept it was sent, and the
// store's lease ends no earlier. Once that moment has passed, another
// instance may have taken the round over, whatever the watcher has seen so
// far (its renewal may still wait for an answer, or the process was
// starved of CPU): a timer then cancels the run with errLeaseLost, and
// check, called before each model call, refuses to start one.
type runLease struct {
	ttl    time.Duration
	cancel context.CancelCauseFunc

	mu    sync.Mutex
	start time.Time // when the claim that took the lease was sent
	until time.Time
	timer *time.Timer
}

// newRunLease starts the lease of a claim sent at sent; cancel cancels
// the run.
func newRunLease(sent time.Time, ttl time.Duration, cancel context.CancelCauseFunc) *runLease {
	l := &runLease{ttl: ttl, cancel: cancel, start: sent, until: sent.Add(ttl)}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.timer = time.AfterFunc(time.Until(l.until), l.expire)
	return l
}

// end is when the lease ends by this process's clock.
func (l *runLease) end() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.until
}

// since is when the claim that took the lease was sent.
func (l *runLease) since() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.start
}

// renewed moves the lease's end on after a renewal sent at sent kept it.
func (l *runLease) renewed(sent time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if until := sent.Add(l.ttl); until.After(l.until) {
		l.until = until
		l.timer.Reset(time.Until(until))
	}
}

// expire cancels the run when the lease has ended (the timer may fire
// just before a renewal moved the end on).
func (l *runLease) expire() {
	if !l.held() {
		l.cancel(errLeaseLost)
	}
}

// held reports whether the lease has not ended yet by this process's clock.
func (l *runLease) held() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return time.Now().Before(l.until)
}

// check returns nil while the run may go on: its context is not done and
// its lease has not ended. An ended lease cancels the run first, so the
// error is ctx's, with errLeaseLost as its cause.
func (l *runLease) check(ctx context.Context) error {
	if l != nil && !l.held() {
		l.cancel(errLeaseLost)
	}
	return ctx.Err()
}

func (l *runLease) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.timer.Stop()
}

// recoverLoop queues, at once and then every RecoverInterval, every running
// workflow of the store that is not running here. Rounds held by a live
// lease elsewhere are skipped by the claim; rounds whose instance died (an
// expired lease) or that were left by a shutdown are resumed from their
// checkpoint. (Overdue approvals are expired by expiryLoop.)
func (r *runner) recoverLoop() {
	t := time.NewTicker(r.e.cfg.RecoverInterval)
	defer t.Stop()
	for {
		ids, err := r.e.store.Running(r.recv)
		if err != nil && r.recv.Err() == nil {
			r.e.log.Warn().AnErr("err", err).Msg("listing running workflows failed")
		}
		for _, id := range ids {
			r.reclaim(id)
		}
		select {
		case <-r.recv.Done():
			return
		case <-t.C:
		}
	}
}

// progressed reports whether a running round has committed work past its
// start: found by the recovery scan, such a round was left by another run
// (a dead or stopped instance), while one still at its start may merely
// have been queued by an API-only instance (a dead instance's round at its
// start is told by its expired lease).
func progressed(wf *workflow.Workflow) bool {
	return wf.Step > 1 || (wf.Checkpoint != nil && wf.Checkpoint.Phase != workflow.PhaseSelect)
}
