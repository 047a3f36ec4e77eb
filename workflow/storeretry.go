package workflow

import (
	"context"
	"errors"
	"time"
)

// Backoff of a store write retried through an outage: the first retry
// waits storeRetryFirst, each next one twice as long, up to storeRetryMax.
const (
	storeRetryFirst = 50 * time.Millisecond
	storeRetryMax   = 2 * time.Second
)

// retryStore runs write (a commit or a trace write) until it succeeds,
// fails for a reason other than an unavailable store, or ctx ends: the
// round was stopped, the lease was lost or the engine is shutting down.
// Each attempt gets its own commitTimeout and runs even when ctx has
// already ended (a finished phase is still persisted once), so only the
// retries depend on ctx. An attempt that ran out of time counts as an
// outage: the store may have applied it, in which case the retry is
// refused by the version check and the run ends without writing.
func (e *Engine) retryStore(ctx context.Context, what, id string, write func(context.Context) error) error {
	wait := storeRetryFirst
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), commitTimeout)
		err := write(actx)
		timedOut := errors.Is(err, context.DeadlineExceeded) && actx.Err() != nil
		cancel()
		if err == nil || (KindOf(err) != KindUnavailable && !timedOut) {
			return err
		}
		if attempt == 1 {
			e.log.Warn("store unavailable; retrying", "workflow", id, "write", what, "err", err)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait = min(2*wait, storeRetryMax)
	}
}
