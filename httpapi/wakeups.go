package httpapi

import (
	"sync"
	"sync/atomic"
)

// wakeups lets the event streams of a workflow read at once when this
// instance commits it (Server.Committed), instead of at their next poll.
// Commits on other instances are not heard: streams keep polling, so a
// missed wake-up only costs latency. It is safe for concurrent use; a
// commit with no stream open costs one atomic load.
type wakeups struct {
	open atomic.Int64 // streams watching, any workflow
	mu   sync.Mutex
	by   map[string]map[chan struct{}]struct{}
}

// watch returns a channel that receives (without blocking the sender, at
// most one pending) after each commit of id, and the function that stops
// it.
func (w *wakeups) watch(id string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	w.open.Add(1) // before the watcher is in the map, so no wake skips it
	w.mu.Lock()
	if w.by == nil {
		w.by = map[string]map[chan struct{}]struct{}{}
	}
	if w.by[id] == nil {
		w.by[id] = map[chan struct{}]struct{}{}
	}
	w.by[id][ch] = struct{}{}
	w.mu.Unlock()
	return ch, func() {
		w.mu.Lock()
		delete(w.by[id], ch)
		if len(w.by[id]) == 0 {
			delete(w.by, id)
		}
		w.mu.Unlock()
		w.open.Add(-1)
	}
}

// wake signals every watcher of id.
func (w *wakeups) wake(id string) {
	if w.open.Load() == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for ch := range w.by[id] {
		select {
		case ch <- struct{}{}:
		default: // one wake-up is already pending
		}
	}
}
