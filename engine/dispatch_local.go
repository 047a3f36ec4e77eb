package engine

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/twostep/twostep/workflow"
)

// localWait is how long LocalDispatcher.Receive waits for an entry.
const localWait = time.Second

// LocalDispatcher is the in-process Dispatcher, the engine's default (and
// the memory store's): one partition, a FIFO of entries and the pending
// ones per consumer, in this process's memory. Engines of one process that
// share it share their rounds as instances sharing a Redis stream do. It is
// safe for concurrent use; the zero value is not usable (NewLocalDispatcher).
type LocalDispatcher struct {
	now func() time.Time

	mu      sync.Mutex
	wake    chan struct{} // closed and replaced when an entry is added
	queue   []localEntry
	pending map[string]*localPending
	seq     uint64
}

type localEntry struct {
	ref, workflowID string
	reclaimed       bool
}

type localPending struct {
	localEntry
	seq      uint64
	consumer string
	touched  time.Time
}

// NewLocalDispatcher returns an empty in-process dispatcher.
func NewLocalDispatcher() *LocalDispatcher {
	return &LocalDispatcher{now: time.Now, wake: make(chan struct{}), pending: map[string]*localPending{}}
}

var _ workflow.Dispatcher = (*LocalDispatcher)(nil)

// Partitions is 1.
func (l *LocalDispatcher) Partitions() int { return 1 }

// Enqueue adds an entry for workflowID at the end of the queue.
func (l *LocalDispatcher) Enqueue(ctx context.Context, workflowID string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if workflowID == "" {
		return workflow.Errorf(workflow.KindInvalid, "Enqueue: a workflow id is required")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.addLocked(workflowID, false)
	return nil
}

func (l *LocalDispatcher) addLocked(workflowID string, reclaimed bool) {
	l.seq++
	l.queue = append(l.queue, localEntry{ref: strconv.FormatUint(l.seq, 10), workflowID: workflowID, reclaimed: reclaimed})
	close(l.wake)
	l.wake = make(chan struct{})
}

// Receive takes the oldest queued entry for consumer, waiting up to a
// second (or until ctx is done) for one.
func (l *LocalDispatcher) Receive(ctx context.Context, consumer string, partition int) (workflow.Delivery, bool, error) {
	if partition != 0 {
		return workflow.Delivery{}, false, workflow.Errorf(workflow.KindInvalid, "Receive: partition %d does not exist (1 partition)", partition)
	}
	timer := time.NewTimer(localWait)
	defer timer.Stop()
	for {
		l.mu.Lock()
		if len(l.queue) > 0 {
			e := l.queue[0]
			l.queue = l.queue[1:]
			seq, _ := strconv.ParseUint(e.ref, 10, 64)
			l.pending[e.ref] = &localPending{localEntry: e, seq: seq, consumer: consumer, touched: l.now()}
			l.mu.Unlock()
			return workflow.Delivery{WorkflowID: e.workflowID, Ref: e.ref, Reclaimed: e.reclaimed}, true, nil
		}
		wake := l.wake
		l.mu.Unlock()
		select {
		case <-ctx.Done():
			return workflow.Delivery{}, false, nil
		case <-timer.C:
			return workflow.Delivery{}, false, nil
		case <-wake:
		}
	}
}

// Reclaim hands consumer the oldest pending entries untouched for idle.
func (l *LocalDispatcher) Reclaim(ctx context.Context, consumer string, idle time.Duration, max int) ([]workflow.Delivery, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	var idleOnes []*localPending
	for _, p := range l.pending {
		if now.Sub(p.touched) >= idle {
			idleOnes = append(idleOnes, p)
		}
	}
	slices.SortFunc(idleOnes, func(a, b *localPending) int { return cmp.Compare(a.seq, b.seq) })
	var out []workflow.Delivery
	for _, p := range idleOnes[:min(max, len(idleOnes))] {
		out = append(out, workflow.Delivery{WorkflowID: p.workflowID, Ref: p.ref, Reclaimed: true, From: p.consumer})
		p.consumer, p.touched, p.reclaimed = consumer, now, true
	}
	return out, nil
}

// Touch makes d consumer's again and resets its idle time; it does
// nothing when d is no longer pending.
func (l *LocalDispatcher) Touch(ctx context.Context, consumer string, d workflow.Delivery) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if p := l.pending[d.Ref]; p != nil {
		p.consumer, p.touched = consumer, l.now()
	}
	return nil
}

// Ack forgets d.
func (l *LocalDispatcher) Ack(ctx context.Context, d workflow.Delivery) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.pending, d.Ref)
	return nil
}

// Requeue forgets d and queues its round again, at the end.
func (l *LocalDispatcher) Requeue(ctx context.Context, d workflow.Delivery) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.pending, d.Ref)
	l.addLocked(d.WorkflowID, d.Reclaimed)
	return nil
}

// Leave does nothing: the local dispatcher keeps no consumer list.
func (l *LocalDispatcher) Leave(ctx context.Context, consumer string) error { return ctx.Err() }
