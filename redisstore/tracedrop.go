package redisstore

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// A commit past the trace cap drops the workflow's oldest traces in its
// script, but their index entries (trace:{id}, each in its own slot) can
// only go with separate commands. Deleting them at once would cost every
// step past the cap one more round trip, so the store queues them and
// deletes them in the pipeline it sends next — a commit's or a delete's,
// of any workflow — or when it is closed. Until then GetTrace already
// answers such a trace as not found (it reads the trace itself); entries
// queued by a process that dies are left until their retention, as those
// of a failed cleanup are.
const (
	// dropsPerPipeline bounds the entries one pipeline deletes.
	dropsPerPipeline = 256
	// maxQueuedDrops bounds the queue: past it a commit deletes the
	// entries it dropped at once (one more round trip).
	maxQueuedDrops = 4096
	// closeFlushTimeout bounds Close's deletion of the queued entries.
	closeFlushTimeout = 2 * time.Second
)

// dropQueue holds the trace ids whose index entries are still to delete.
type dropQueue struct {
	mu  sync.Mutex
	ids []string
}

// add queues ids, or reports false (queuing nothing) when that would pass
// maxQueuedDrops.
func (q *dropQueue) add(ids []string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.ids)+len(ids) > maxQueuedDrops {
		return false
	}
	q.ids = append(q.ids, ids...)
	return true
}

// take removes and returns up to n queued ids.
func (q *dropQueue) take(n int) []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	n = min(n, len(q.ids))
	if n == 0 {
		return nil
	}
	out := append([]string(nil), q.ids[len(q.ids)-n:]...)
	q.ids = q.ids[:len(q.ids)-n]
	return out
}

// pendingDrops queues on p the deletion of up to dropsPerPipeline queued
// entries, taken off the queue; requeue must run after p was sent.
type pendingDrops struct {
	s    *Store
	ids  []string
	dels []*redis.IntCmd
}

// takeDrops takes the entries the next pipeline deletes.
func (s *Store) takeDrops() *pendingDrops {
	return &pendingDrops{s: s, ids: s.drops.take(dropsPerPipeline)}
}

// queue adds the DELs to p; a pipeline sent again (a retried script)
// queues them again.
func (d *pendingDrops) queue(ctx context.Context, p redis.Pipeliner) {
	d.dels = d.dels[:0]
	for _, id := range d.ids {
		d.dels = append(d.dels, p.Del(ctx, d.s.keys.trace(id)))
	}
}

// requeue puts back the entries whose DEL was not sent or failed.
func (d *pendingDrops) requeue() {
	var left []string
	for i, id := range d.ids {
		if i >= len(d.dels) || d.dels[i].Err() != nil {
			left = append(left, id)
		}
	}
	if len(left) > 0 {
		d.s.drops.add(left)
	}
}

// dropLater queues the index entries of the traces ids for a later
// pipeline, or deletes them now when the queue is full.
func (s *Store) dropLater(ctx context.Context, ids []string) {
	if !s.drops.add(ids) {
		_ = s.dropTraceEntries(ctx, ids)
	}
}

// flushDrops deletes every queued entry, dropsPerPipeline a pipeline.
func (s *Store) flushDrops(ctx context.Context) error {
	for {
		ids := s.drops.take(dropsPerPipeline)
		if len(ids) == 0 {
			return nil
		}
		if err := s.dropTraceEntries(ctx, ids); err != nil {
			return err
		}
	}
}
