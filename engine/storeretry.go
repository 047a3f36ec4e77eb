package engine

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/twostep/twostep/workflow"
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
//
// detached is context.WithoutCancel(ctx), the parent of each attempt's
// context: the run keeps one for its context (see Run.detach).
func (e *Engine) retryStore(ctx, detached context.Context, what, id string, write func(context.Context) error) error {
	wait := storeRetryFirst
	for attempt := 1; ; attempt++ {
		actx := newDetachedAttempt(detached, commitTimeout)
		err := write(actx)
		timedOut := errors.Is(err, context.DeadlineExceeded) && actx.Err() != nil
		actx.release()
		if err == nil || (workflow.KindOf(err) != workflow.KindUnavailable && !timedOut) {
			return err
		}
		if attempt == 1 {
			e.log.Warn().Str("workflow", id).Str("write", what).AnErr("err", err).Msg("store unavailable; retrying")
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

// attemptContext is context.WithTimeout(context.WithoutCancel(parent), d),
// the context of one store write, made cheap for a store that never waits
// on Done (the memory store only calls Err): its Done channel and timer
// are made when Done is first called, and Err compares the deadline with
// the clock. A commit is three of these per step. A context derived from it
// with context.WithCancel watches it from a goroutine of its own (it is not
// one of package context's own contexts).
type attemptContext struct {
	parent   context.Context // a context.WithoutCancel: values only
	deadline time.Time

	mu    sync.Mutex
	done  chan struct{} // made by the first Done
	timer *time.Timer   // closes done at the deadline
	err   error         // set when the context ends
}

func newAttemptContext(parent context.Context, d time.Duration) *attemptContext {
	return newDetachedAttempt(context.WithoutCancel(parent), d)
}

// newDetachedAttempt is newAttemptContext for a parent that already is a
// context.WithoutCancel.
func newDetachedAttempt(detached context.Context, d time.Duration) *attemptContext {
	return &attemptContext{parent: detached, deadline: time.Now().Add(d)}
}

func (c *attemptContext) Deadline() (time.Time, bool) { return c.deadline, true }
func (c *attemptContext) Value(key any) any           { return c.parent.Value(key) }

func (c *attemptContext) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		c.done = make(chan struct{})
		switch d := time.Until(c.deadline); {
		case c.err != nil:
			close(c.done)
		case d <= 0:
			c.endLocked(context.DeadlineExceeded)
		default:
			c.timer = time.AfterFunc(d, func() { c.end(context.DeadlineExceeded) })
		}
	}
	return c.done
}

func (c *attemptContext) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil && !time.Now().Before(c.deadline) {
		c.endLocked(context.DeadlineExceeded)
	}
	return c.err
}

func (c *attemptContext) String() string { return "workflow.attemptContext" }

// release ends the context (context.Canceled unless it timed out) and
// stops its timer: the cancel function of context.WithTimeout.
func (c *attemptContext) release() { c.end(context.Canceled) }

func (c *attemptContext) end(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.endLocked(err)
}

func (c *attemptContext) endLocked(err error) {
	if c.err != nil {
		return
	}
	c.err = err
	if c.done != nil {
		close(c.done)
	}
	if c.timer != nil {
		c.timer.Stop()
	}
}
