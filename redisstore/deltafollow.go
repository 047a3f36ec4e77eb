package redisstore

import (
	"context"
	"errors"
	"sync"

	"github.com/redis/go-redis/v9"
)

// follow keeps an instance subscribed to the delta channels of the
// workflows someone on it watches: one shared Pub/Sub connection on a
// single Redis, one sharded subscription per workflow on a cluster (a
// sharded subscription is served by the shard of its channel's slot).
type follow struct {
	bus  *DeltaBus
	wake chan struct{}

	mu sync.Mutex
	// want is the workflows watched here; have those subscribed to;
	// confirmed those Redis has confirmed.
	want, have, confirmed map[string]bool
	ps                    *redis.PubSub            // single Redis: the shared subscription
	shards                map[string]*redis.PubSub // cluster: by workflow id
	closed                bool
	// readers are the goroutines reading ps and shards: close waits
	// for them.
	readers sync.WaitGroup
}

func newFollow(b *DeltaBus) follow {
	return follow{bus: b, wake: make(chan struct{}, 1), want: map[string]bool{}, have: map[string]bool{},
		confirmed: map[string]bool{}, shards: map[string]*redis.PubSub{}}
}

// set records that workflowID is watched here (on) or no longer (off) and
// wakes the loop; it never blocks.
func (f *follow) set(workflowID string, on bool) {
	f.mu.Lock()
	if on {
		f.want[workflowID] = true
	} else {
		delete(f.want, workflowID)
	}
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// following reports whether Redis confirmed the subscription to
// workflowID's channel.
func (f *follow) following(workflowID string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.confirmed[workflowID]
}

// loop subscribes and unsubscribes as the watched workflows change.
func (f *follow) loop() {
	defer f.bus.wg.Done()
	for {
		select {
		case <-f.bus.ctx.Done():
			return
		case <-f.wake:
		}
		f.reconcile()
	}
}

// reconcile brings the subscriptions in line with want.
func (f *follow) reconcile() {
	f.mu.Lock()
	var add, drop []string
	for id := range f.want {
		if !f.have[id] {
			add = append(add, id)
			f.have[id] = true
		}
	}
	for id := range f.have {
		if !f.want[id] {
			drop = append(drop, id)
			delete(f.have, id)
			delete(f.confirmed, id)
		}
	}
	f.mu.Unlock()
	ctx := f.bus.ctx
	if f.bus.cluster {
		f.reconcileShards(ctx, add, drop)
		return
	}
	if len(add) > 0 {
		if f.ps == nil {
			f.ps = f.bus.rdb.Subscribe(ctx)
			f.goRead(f.ps)
		}
		_ = f.ps.Subscribe(ctx, f.names(add)...)
	}
	if len(drop) > 0 && f.ps != nil {
		_ = f.ps.Unsubscribe(ctx, f.names(drop)...)
	}
}

// reconcileShards opens a sharded subscription per added workflow and
// closes those of the dropped ones.
func (f *follow) reconcileShards(ctx context.Context, add, drop []string) {
	for _, id := range add {
		ps := f.bus.rdb.SSubscribe(ctx, f.bus.channel(id))
		f.mu.Lock()
		f.shards[id] = ps
		f.mu.Unlock()
		f.goRead(ps)
	}
	for _, id := range drop {
		f.mu.Lock()
		ps := f.shards[id]
		delete(f.shards, id)
		f.mu.Unlock()
		if ps != nil {
			_ = ps.Close()
		}
	}
}

func (f *follow) names(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = f.bus.channel(id)
	}
	return out
}

// goRead starts reading ps in a goroutine close waits for.
func (f *follow) goRead(ps *redis.PubSub) {
	f.readers.Add(1)
	go func() {
		defer f.readers.Done()
		f.read(ps)
	}()
}

// read hands ps's messages to the local watchers until ps is closed, and
// marks its confirmed subscriptions.
func (f *follow) read(ps *redis.PubSub) {
	for m := range ps.ChannelWithSubscriptions() {
		switch m := m.(type) {
		case *redis.Message:
			f.bus.receive(m.Payload)
		case *redis.Subscription:
			f.confirm(m)
		}
	}
}

// confirm records Redis's answer to a (un)subscription.
func (f *follow) confirm(s *redis.Subscription) {
	id := f.bus.workflowOf(s.Channel)
	if id == "" {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch s.Kind {
	case "subscribe", "ssubscribe":
		if f.have[id] {
			f.confirmed[id] = true
		}
	default:
		delete(f.confirmed, id)
	}
}

// close closes every subscription and waits for their readers (once
// loop has returned: nothing opens another).
func (f *follow) close() error {
	defer f.readers.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil
	}
	f.closed = true
	var errs []error
	if f.ps != nil {
		errs = append(errs, f.ps.Close())
	}
	for _, ps := range f.shards {
		errs = append(errs, ps.Close())
	}
	return errors.Join(errs...)
}
