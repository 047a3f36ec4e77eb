package engine

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twostep/twostep/workflow"
)

// Causes of a run's cancellation, seen through context.Cause.
var (
	errShutdown         = errors.New("engine shutting down")
	errStopped          = errors.New("round stopped")
	errStoppedElsewhere = errors.New("round no longer running in the store")
	errLeaseLost        = errors.New("round lease lost")
)

// Dispatch timings.
const (
	// dispatchTimeout bounds one Enqueue, Ack or Requeue.
	dispatchTimeout = 5 * time.Second
	// busyRetries is how often a delivered round whose lease another
	// instance holds is tried again here, busyDelay apart (doubling),
	// before it is left for Reclaim: the holder may just be finishing the
	// round before a new one was started elsewhere.
	busyRetries = 3
	busyDelay   = 150 * time.Millisecond
)

// runner is the local runner: a bounded pool of workers fed by a FIFO of
// rounds. Rounds come from the Dispatcher (one reader per partition, which
// receives only while a worker is free, so queued work goes to whichever
// instance is idle), from entries other consumers left (Reclaim, every
// ReclaimInterval) and from the recovery scan (every RecoverInterval, the
// safety net for rounds that never got an entry). Workers claim each
// round's lease and run it; a delivery is acked once its round is no
// longer running. Every goroutine it starts is counted in wg and waited
// for by shutdown.
type runner struct {
	e *Engine
	d workflow.Dispatcher

	mu     sync.Mutex
	cond   *sync.Cond // a round was queued, or the runner closed
	room   *sync.Cond // a worker became free, or the runner closed
	queue  []*item
	queued map[string]*item
	active map[string]*activeRun
	// started and closed: Start ran; Shutdown began (or the base context
	// ended). Closed runners take no new rounds.
	started bool
	closed  bool
	base    context.Context
	cancel  context.CancelCauseFunc
	// recv ends the readers and the reclaim and recovery loops; it is
	// cancelled when shutdown begins.
	recv       context.Context
	recvCancel context.CancelFunc
	wg         sync.WaitGroup
	// draining is set by shutdown: running rounds end after the phase in
	// flight is committed.
	draining atomic.Bool
}

// item is a round queued (or running) here, with the dispatcher entries
// that offered it.
type item struct {
	id         string
	deliveries []workflow.Delivery
	// takeover: it came from an entry reclaimed from, or left by, another
	// instance (from: that instance, when known); scanned: the recovery
	// scan found the round.
	takeover  bool
	scanned   bool
	from      string
	busyTries int
}

// activeRun is a round this instance is running (or about to).
type activeRun struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	done   chan struct{}
	it     *item
	// intr asks the run to end its round for an interrupting round.
	intr *interruptSignal
	// again asks for another run once this one ends: a round was started
	// or resumed, or delivered again, while this run was still going.
	again bool
}

func newRunner(e *Engine) *runner {
	r := &runner{e: e, d: e.cfg.Dispatcher, queued: map[string]*item{}, active: map[string]*activeRun{}}
	r.cond = sync.NewCond(&r.mu)
	r.room = sync.NewCond(&r.mu)
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
	r.recv, r.recvCancel = context.WithCancel(r.base)
	for range r.e.cfg.Workers {
		r.wg.Go(r.work)
	}
	for p := range r.d.Partitions() {
		r.wg.Go(func() { r.read(p) })
	}
	r.wg.Go(r.reclaimLoop)
	r.wg.Go(r.recoverLoop)
	r.wg.Go(r.expiryLoop)
	// Names this instance (every engine line carries it), so that the
	// previous holder a takeover line names can be told.
	r.e.log.Info().Int("workers", r.e.cfg.Workers).Msg("workers started")
	r.wg.Go(func() {
		<-r.recv.Done()
		r.close()
	})
}

// close makes the runner take no new rounds and wakes every waiter.
func (r *runner) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	r.cond.Broadcast()
	r.room.Broadcast()
}

func (r *runner) shutdown(ctx context.Context) error {
	r.close()
	r.mu.Lock()
	started := r.started
	left := r.queue
	r.queue, r.queued = nil, map[string]*item{}
	r.mu.Unlock()
	if !started {
		return nil
	}
	r.draining.Store(true)
	r.recvCancel()
	for _, it := range left { // queued, never started: offer them to others
		r.handOff(it, false)
	}
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
		lctx, cancel := context.WithTimeout(ctx, dispatchTimeout)
		defer cancel()
		if err := r.d.Leave(lctx, r.e.cfg.InstanceID); err != nil {
			r.e.log.Warn().AnErr("err", err).Msg("leaving the dispatch group failed")
		}
		return nil
	case <-ctx.Done():
		return workflow.WrapKind(workflow.KindUnavailable, ctx.Err(), "Shutdown: rounds still running")
	}
}

// schedule dispatches id's round, just committed running. When this
// instance is still finishing a previous run of it, the round runs again
// here right after; if that run came from an entry, the entry stays
// pending until then and covers the new round (should this instance die,
// it is reclaimed). Otherwise the round gets an entry any instance's idle
// worker receives, this one's included; if that fails, the recovery scan
// finds the round.
func (r *runner) schedule(ctx context.Context, id string) {
	r.mu.Lock()
	if a := r.active[id]; a != nil && !r.closed {
		a.again = true
		if len(a.it.deliveries) > 0 {
			r.mu.Unlock()
			return
		}
	}
	r.mu.Unlock()
	ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), dispatchTimeout)
	defer cancel()
	if err := r.d.Enqueue(ectx, id); err != nil {
		r.e.log.Warn().Str("workflow", id).AnErr("err", err).Msg("dispatching a round failed; the recovery scan will find it")
		r.observe(workflow.DispatchEnqueueFailed, 1)
		return
	}
	r.observe(workflow.DispatchEnqueued, 1)
}

// reclaim queues id, found running by the recovery scan, unless it is
// already queued or running here.
func (r *runner) reclaim(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.active[id] == nil && r.queued[id] == nil && !r.closed {
		r.enqueueLocked(&item{id: id, scanned: true})
	}
}

// offer takes a delivery: attached to the round's run or queue entry when
// it is already here, else queued when a worker is free; otherwise (all
// workers took other rounds meanwhile, or the runner closed) it is
// requeued for another instance.
func (r *runner) offer(d workflow.Delivery) {
	r.mu.Lock()
	if !r.closed {
		if a := r.active[d.WorkflowID]; a != nil {
			a.it.deliveries = append(a.it.deliveries, d)
			a.again = true // it may be a new round: look once more
			r.mu.Unlock()
			r.observe(received(d), 1)
			return
		}
		if it := r.queued[d.WorkflowID]; it != nil {
			it.deliveries = append(it.deliveries, d)
			it.takeover = it.takeover || d.Reclaimed
			if d.From != "" {
				it.from = d.From
			}
			r.mu.Unlock()
			r.observe(received(d), 1)
			return
		}
		if r.freeLocked() > 0 {
			r.enqueueLocked(&item{id: d.WorkflowID, deliveries: []workflow.Delivery{d}, takeover: d.Reclaimed, from: d.From})
			r.mu.Unlock()
			r.observe(received(d), 1)
			return
		}
	}
	r.mu.Unlock()
	r.handOff(&item{id: d.WorkflowID, deliveries: []workflow.Delivery{d}}, false)
}

// freeLocked is how many workers have nothing to do.
func (r *runner) freeLocked() int { return r.e.cfg.Workers - len(r.active) - len(r.queue) }

func (r *runner) enqueueLocked(it *item) {
	if r.closed || r.queued[it.id] != nil {
		return
	}
	r.queued[it.id] = it
	r.queue = append(r.queue, it)
	r.cond.Signal()
}

// next blocks until a round is queued, marks it active and returns it;
// false once the runner is closed.
func (r *runner) next() (*item, *activeRun, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(r.queue) == 0 && !r.closed {
		r.cond.Wait()
	}
	if r.closed {
		return nil, nil, false
	}
	it := r.queue[0]
	r.queue = r.queue[1:]
	delete(r.queued, it.id)
	ctx, cancel := context.WithCancelCause(r.base)
	a := &activeRun{ctx: ctx, cancel: cancel, done: make(chan struct{}), it: it, intr: &interruptSignal{}}
	r.active[it.id] = a
	return it, a, true
}

func (r *runner) work() {
	for {
		it, a, ok := r.next()
		if !ok {
			return
		}
		out := r.e.runClaimed(a.ctx, it.id, takeover{entry: it.takeover, scan: it.scanned, from: it.from}, func(ctx context.Context) { r.touch(ctx, a) }, a.intr)
		a.cancel(nil)
		r.finish(it, a, out)
	}
}

// touch keeps the deliveries of a running round from being reclaimed.
func (r *runner) touch(ctx context.Context, a *activeRun) {
	r.mu.Lock()
	ds := append([]workflow.Delivery(nil), a.it.deliveries...)
	r.mu.Unlock()
	for _, d := range ds {
		if err := r.d.Touch(ctx, r.e.cfg.InstanceID, d); err != nil && ctx.Err() == nil {
			r.e.log.Warn().Str("workflow", d.WorkflowID).AnErr("err", err).Msg("touching a dispatched round failed")
		}
	}
}

// finish ends a run of it: runs it again when asked to; acks its
// deliveries when the round no longer runs; tries a busy round again a
// little later; hands an interrupted round to another instance when
// shutting down; else leaves the deliveries pending for Reclaim.
func (r *runner) finish(it *item, a *activeRun, out runOutcome) {
	r.mu.Lock()
	delete(r.active, it.id)
	close(a.done)
	r.room.Broadcast()
	closed := r.closed
	if a.again && !closed {
		it.takeover, it.scanned, it.from, it.busyTries = false, false, "", 0
		r.enqueueLocked(it)
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	if out == runLeft || (out == runBusy && (closed || it.busyTries >= busyRetries)) {
		r.observe(workflow.DispatchLeft, len(it.deliveries))
	}
	switch {
	case out == runSettled && !a.again:
		r.ack(it.deliveries)
	case closed && (out == runInterrupted || a.again):
		if len(it.deliveries) == 0 { // found by the scan: give it an entry
			r.schedule(context.Background(), it.id)
			return
		}
		r.handOff(it, true)
	case out == runBusy && !closed && it.busyTries < busyRetries && len(it.deliveries) > 0:
		delay := busyDelay << it.busyTries
		it.busyTries++
		r.wg.Go(func() {
			t := time.NewTimer(delay)
			defer t.Stop()
			select {
			case <-t.C:
				r.retry(it)
			case <-r.recv.Done():
			}
		})
	}
}

// retry queues a busy round again (with its deliveries) unless it is
// here already; a round that found no free worker stays pending.
func (r *runner) retry(it *item) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if a := r.active[it.id]; a != nil {
		a.it.deliveries = append(a.it.deliveries, it.deliveries...)
		a.again = true
		return
	}
	if q := r.queued[it.id]; q != nil {
		q.deliveries = append(q.deliveries, it.deliveries...)
		return
	}
	r.enqueueLocked(it)
}

// ack acks every delivery.
func (r *runner) ack(ds []workflow.Delivery) {
	ctx, cancel := context.WithTimeout(context.Background(), dispatchTimeout)
	defer cancel()
	for _, d := range ds {
		if err := r.d.Ack(ctx, d); err != nil {
			r.e.log.Warn().Str("workflow", d.WorkflowID).AnErr("err", err).Msg("acking a dispatched round failed")
			continue
		}
		r.observe(workflow.DispatchAcked, 1)
	}
}

// handOff gives a round this instance will not run to another one: its
// first delivery is requeued, the others acked. interrupted (a run here
// stopped it mid-round) marks the new entry as left, so the next instance
// logs a takeover; a round that never started here keeps the mark it had.
// A round the recovery scan found has no delivery and is left to the next
// scan.
func (r *runner) handOff(it *item, interrupted bool) {
	if len(it.deliveries) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), dispatchTimeout)
	defer cancel()
	first := it.deliveries[0]
	first.Reclaimed = first.Reclaimed || interrupted
	if err := r.d.Requeue(ctx, first); err != nil {
		r.e.log.Warn().Str("workflow", it.id).AnErr("err", err).Msg("handing a round to another instance failed; it is left for reclaim")
		return
	}
	r.observe(workflow.DispatchHandedOff, 1)
	r.ack(it.deliveries[1:])
}

// observe reports n dispatch events to the Observer.
func (r *runner) observe(event string, n int) {
	o := r.e.observer()
	for range n {
		o.Dispatched(event)
	}
}

// received is the event of taking d here.
func received(d workflow.Delivery) string {
	if d.Reclaimed {
		return workflow.DispatchReclaimed
	}
	return workflow.DispatchReceived
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

// interrupt asks id's run on this instance, if any, to end its round at
// the next safe point for the interrupting round just queued.
func (r *runner) interrupt(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if a := r.active[id]; a != nil {
		a.intr.request()
	}
}
