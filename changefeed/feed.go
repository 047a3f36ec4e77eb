// Package changefeed is the in-process change-notification service
// (workflow.Changes): the engine publishes each commit it makes, and the
// requests waiting for a round, the event streams and tests of this
// process subscribe to the workflows they watch. It knows nothing of other
// instances: their commits reach a watcher through the store, which the
// watcher reads now and then. DeltaFeed does the same for the deltas of
// streaming replies (deltas.go), which redisstore carries between
// instances.
package changefeed

import (
	"sync"
	"sync/atomic"

	"github.com/twostep/twostep/workflow"
)

var _ workflow.Changes = (*Feed)(nil)

// Feed fans each published change out to the subscribers of its workflow.
// Publish never blocks: each subscription holds at most one pending
// change, the latest (keeping an earlier pending round end when the latest
// has none). A Publish with nobody subscribed, to any workflow, costs one
// atomic load. The zero value is not ready: use New. A Feed is safe for
// concurrent use.
type Feed struct {
	open atomic.Int64 // subscriptions, any workflow
	mu   sync.Mutex
	by   map[string]map[chan workflow.Change]struct{}
}

// New returns a Feed with no subscribers.
func New() *Feed {
	return &Feed{by: map[string]map[chan workflow.Change]struct{}{}}
}

// Subscribe returns a channel that receives the changes of workflowID
// published after it, and the function that ends the subscription (safe
// to call more than once). The channel is never closed.
func (f *Feed) Subscribe(workflowID string) (<-chan workflow.Change, func()) {
	ch := make(chan workflow.Change, 1)
	f.open.Add(1) // before the subscription is in the map, so no Publish skips it
	f.mu.Lock()
	subs := f.by[workflowID]
	if subs == nil {
		subs = map[chan workflow.Change]struct{}{}
		f.by[workflowID] = subs
	}
	subs[ch] = struct{}{}
	f.mu.Unlock()
	var once sync.Once
	return ch, func() { once.Do(func() { f.cancel(workflowID, ch) }) }
}

// cancel ends the subscription ch of workflowID.
func (f *Feed) cancel(workflowID string, ch chan workflow.Change) {
	f.mu.Lock()
	delete(f.by[workflowID], ch)
	if len(f.by[workflowID]) == 0 {
		delete(f.by, workflowID)
	}
	f.mu.Unlock()
	f.open.Add(-1)
}

// Publish hands c to every subscriber of c.WorkflowID without blocking:
// a change still pending there is replaced by c, and c takes over its
// Ended and Messages when c has none, so a round's end is never lost to a
// later commit.
func (f *Feed) Publish(c workflow.Change) {
	if f.open.Load() == 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for ch := range f.by[c.WorkflowID] {
		next := c
		select {
		case pending := <-ch:
			if next.Ended == nil {
				next.Ended, next.Messages = pending.Ended, pending.Messages
			}
		default:
		}
		// Only Publish sends, under f.mu, and the channel was just
		// emptied or found empty: this send does not block.
		ch <- next
	}
}
