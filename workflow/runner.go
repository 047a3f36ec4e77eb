package workflow

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// Causes of a run's cancellation, seen through context.Cause.
var (
	errShutdown         = errors.New("engine shutting down")
	errStopped          = errors.New("round stopped")
	errStoppedElsewhere = errors.New("round no longer running in the store")
	errLeaseLost        = errors.New("round lease lost")
)

// runner is the local runner: a FIFO queue of workflow ids, a bounded pool
// of workers that claim each round's lease and run it, and a recovery loop
// that queues running workflows no instance holds. Every goroutine it
// starts is counted in wg and waited for by shutdown.
type runner struct {
	e *Engine

	mu     sync.Mutex
	cond   *sync.Cond
	queue  []string
	queued map[string]bool
	active map[string]*activeRun
	// recovered marks queued rounds the recovery loop found running in the
	// store without this instance having scheduled them: a takeover.
	recovered map[string]bool
	started   bool
	closed    bool
	base      context.Context
	cancel    context.CancelCauseFunc
	wg        sync.WaitGroup
	// draining is set by shutdown: running rounds end after the phase in
	// flight is committed. stopping is closed then, ending the recovery loop.
	draining atomic.Bool
	stopping chan struct{}
	stopOnce sync.Once
}

// activeRun is a round this instance is running (or about to).
type activeRun struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	done   chan struct{}
	// again asks for another run once this one ends: a round was started
	// or resumed while the previous run was still winding down.
	again bool
	// takeover is set when the recovery loop queued the round.
	takeover bool
}

func newRunner(e *Engine) *runner {
	r := &runner{e: e, queued: map[string]bool{}, active: map[string]*activeRun{}, recovered: map[string]bool{},
		stopping: make(chan struct{})}
	r.cond = sync.NewCond(&r.mu)
	return r
}

func (r *runner) start(ctx context.Context) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started || r.closed {
		return
	}
	r.started = true
	r.base, r.cancel = context.WithCancelCause(ctx)
	for range r.e.cfg.Workers {
		r.wg.Go(r.work)
	}
	r.wg.Go(r.recoverLoop)
	r.wg.Go(func() {
		select {
		case <-r.base.Done():
		case <-r.stopping:
		}
		r.mu.Lock()
		r.closed = true
		r.cond.Broadcast()
		r.mu.Unlock()
	})
}

func (r *runner) shutdown(ctx context.Context) error {
	r.mu.Lock()
	r.closed = true
	r.cond.Broadcast()
	started := r.started
	r.mu.Unlock()
	if !started {
		return nil
	}
	r.draining.Store(true)
	r.stopOnce.Do(func() { close(r.stopping) })
	done := make(chan struct{})
	go func() { // ends when the workers do; shutdown waits for it or ctx
		r.wg.Wait()
		close(done)
	}()
	grace := time.NewTimer(r.e.cfg.ShutdownGrace)
	defer grace.Stop()
	select {
	case <-done:
	case <-grace.C:
	case <-ctx.Done():
	}
	r.cancel(errShutdown)
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return WrapKind(KindUnavailable, ctx.Err(), "Shutdown: rounds still running")
	}
}

// schedule queues id's round. When this instance is still finishing a
// previous run of it, the round runs again right after. Before Start (or on
// an API-only instance, which never starts) it does nothing: the recovery
// scan of whichever instance runs workers picks the round up.
func (r *runner) schedule(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.started { // no workers here: the recovery scan of a worker finds it
		return
	}
	delete(r.recovered, id)
	if a := r.active[id]; a != nil {
		a.again = true
		return
	}
	r.enqueueLocked(id)
}

// reclaim queues id unless it is already queued or running here.
func (r *runner) reclaim(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.active[id] == nil && !r.queued[id] && !r.closed {
		r.recovered[id] = true
		r.enqueueLocked(id)
	}
}

func (r *runner) enqueueLocked(id string) {
	if r.closed || r.queued[id] {
		return
	}
	r.queued[id] = true
	r.queue = append(r.queue, id)
	r.cond.Signal()
}

// next blocks until a round is queued, marks it active and returns it;
// false once the runner is closed.
func (r *runner) next() (string, *activeRun, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(r.queue) == 0 && !r.closed {
		r.cond.Wait()
	}
	if r.closed {
		return "", nil, false
	}
	id := r.queue[0]
	r.queue = r.queue[1:]
	delete(r.queued, id)
	ctx, cancel := context.WithCancelCause(r.base)
	a := &activeRun{ctx: ctx, cancel: cancel, done: make(chan struct{}), takeover: r.recovered[id]}
	delete(r.recovered, id)
	r.active[id] = a
	return id, a, true
}

func (r *runner) work() {
	for {
		id, a, ok := r.next()
		if !ok {
			return
		}
		r.e.runClaimed(a.ctx, id, a.takeover)
		a.cancel(nil)
		r.mu.Lock()
		delete(r.active, id)
		close(a.done)
		if a.again {
			r.enqueueLocked(id)
		}
		r.mu.Unlock()
	}
}

// stop cancels id's run on this instance, if any, and returns a channel
// closed when it has ended (nil when there is none).
func (r *runner) stop(id string, cause error) <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	a := r.active[id]
	if a == nil {
		return nil
	}
	a.again = false
	a.cancel(cause)
	return a.done
}
