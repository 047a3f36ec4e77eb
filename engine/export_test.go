package engine

// Pending returns how many entries are delivered and not yet acked, and
// how many wait to be delivered: what XPENDING and the stream length tell
// of a Redis stream.
func (l *LocalDispatcher) Pending() (pending, queued int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.pending), len(l.queue)
}
