package changefeed

import (
	"sync"
	"sync/atomic"

	"github.com/twostep/twostep/workflow"
)

var _ workflow.Deltas = (*DeltaFeed)(nil)

// DeltaBuffer is how many deltas a subscription holds before it loses the
// newest: a watcher that reads slower than the model writes misses pieces
// of a streamed answer, never a committed message (those are read from
// the store).
const DeltaBuffer = 256

// DeltaFeed fans the deltas of streaming replies (DESIGN §11.3) out to the
// subscribers of their workflow, in this process: the memory store's
// transport, and the local half of the Redis one. PublishDelta never
// blocks: a subscription whose buffer is full loses the delta and counts
// it (Lost). A PublishDelta with nobody subscribed costs one atomic load. The
// zero value is not ready: use NewDeltas. A DeltaFeed is safe for
// concurrent use.
type DeltaFeed struct {
	open atomic.Int64 // subscriptions, any workflow
	lost atomic.Int64 // deltas dropped on a full buffer
	mu   sync.RWMutex
	by   map[string]map[chan workflow.Delta]struct{}
	// watch, when set, hears a workflow's first subscription (true) and
	// the end of its last (false), under mu: the Redis transport follows
	// its channel while someone here watches.
	watch func(workflowID string, on bool)
}

// Lost is how many deltas subscriptions dropped because their readers
// were behind.
func (f *DeltaFeed) Lost() int64 { return f.lost.Load() }

// Subscriptions is how many subscriptions are open, any workflow.
func (f *DeltaFeed) Subscriptions() int64 { return f.open.Load() }

// NewDeltas returns a DeltaFeed with no subscribers.
func NewDeltas() *DeltaFeed {
	return &DeltaFeed{by: map[string]map[chan workflow.Delta]struct{}{}}
}

// NewDeltasWatched is NewDeltas whose watch hears each workflow's first
// subscription (on) and the end of its last (off), called under the
// feed's lock, so calls for one workflow arrive in order; watch must not
// block or call back into the feed.
func NewDeltasWatched(watch func(workflowID string, on bool)) *DeltaFeed {
	f := NewDeltas()
	f.watch = watch
	return f
}

// SubscribeDeltas returns a channel that receives the deltas of
// workflowID published after it, and the function that ends the
// subscription (safe to call more than once). The channel is never
// closed.
func (f *DeltaFeed) SubscribeDeltas(workflowID string) (<-chan workflow.Delta, func()) {
	sub := make(chan workflow.Delta, DeltaBuffer)
	f.open.Add(1)
	f.mu.Lock()
	subs := f.by[workflowID]
	if subs == nil {
		subs = map[chan workflow.Delta]struct{}{}
		f.by[workflowID] = subs
		if f.watch != nil {
			f.watch(workflowID, true)
		}
	}
	subs[sub] = struct{}{}
	f.mu.Unlock()
	var once sync.Once
	return sub, func() { once.Do(func() { f.cancel(workflowID, sub) }) }
}

// cancel ends sub's subscription to workflowID.
func (f *DeltaFeed) cancel(workflowID string, sub chan workflow.Delta) {
	f.mu.Lock()
	delete(f.by[workflowID], sub)
	if len(f.by[workflowID]) == 0 {
		delete(f.by, workflowID)
		if f.watch != nil {
			f.watch(workflowID, false)
		}
	}
	f.mu.Unlock()
	f.open.Add(-1)
}

// PublishDelta hands d to every subscriber of d.WorkflowID without
// blocking; a subscriber whose buffer is full loses it.
func (f *DeltaFeed) PublishDelta(d workflow.Delta) {
	if f.open.Load() == 0 {
		return
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	for sub := range f.by[d.WorkflowID] {
		select {
		case sub <- d:
		default:
			f.lost.Add(1)
		}
	}
}

// Watched reports whether anyone here subscribes to workflowID's deltas.
func (f *DeltaFeed) Watched(workflowID string) bool {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return len(f.by[workflowID]) > 0
}
