package redisstore

import (
	"context"
	"encoding/json"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/changefeed"
	"github.com/twostep/twostep/workflow"
)

var _ workflow.Deltas = (*DeltaBus)(nil)

// deltaQueue is how many deltas wait to be published before PublishDelta
// drops new ones (a Redis that stalls must not stall a model's stream).
const deltaQueue = 4096

// deltaBatch is the most deltas one pipeline publishes.
const deltaBatch = 64

// DeltaBus carries the deltas of streaming replies (DESIGN §11.3) between
// instances over Redis Pub/Sub: PublishDelta queues a delta for PUBLISH
// on its workflow's channel (SPUBLISH, sharded Pub/Sub, on a cluster), and
// each instance follows the channels of the workflows someone on it
// watches, handing what arrives to its local DeltaFeed. A delta reaches
// the watchers of the publishing instance the same way, so every watcher
// sees one order. Deltas are not stored: one published while nobody
// follows its channel, or dropped on a full queue, is gone, which the
// contract allows (the committed message is the truth). Close stops it.
type DeltaBus struct {
	rdb     redis.UniversalClient
	cluster bool
	prefix  string
	local   *changefeed.DeltaFeed
	queue   chan workflow.Delta
	// dropped counts deltas PublishDelta dropped on a full queue.
	dropped   atomic.Int64
	ctx       context.Context
	stop      context.CancelFunc
	wg        sync.WaitGroup
	followers follow
}

// Deltas returns the store's delta transport, started; Close it before
// closing the store.
func (s *Store) Deltas() *DeltaBus {
	ctx, stop := context.WithCancel(context.Background())
	b := &DeltaBus{rdb: s.rdb, cluster: s.cluster, prefix: s.opts.KeyPrefix,
		queue: make(chan workflow.Delta, deltaQueue), ctx: ctx, stop: stop}
	b.followers = newFollow(b)
	b.local = changefeed.NewDeltasWatched(b.followers.set)
	b.wg.Add(2)
	go b.publishLoop()
	go b.followers.loop()
	return b
}

// PublishDelta queues d for its workflow's channel without blocking; a
// full queue drops it.
func (b *DeltaBus) PublishDelta(d workflow.Delta) {
	select {
	case b.queue <- d:
	default:
		b.dropped.Add(1)
	}
}

// SubscribeDeltas returns a channel that receives the deltas of
// workflowID, from any instance, published after its channel is followed
// (at once when another watcher here follows it; within a round trip
// otherwise), and the function that ends the subscription.
func (b *DeltaBus) SubscribeDeltas(workflowID string) (<-chan workflow.Delta, func()) {
	return b.local.SubscribeDeltas(workflowID)
}

// Following reports whether this instance receives workflowID's channel
// (a test waits for it before publishing from another instance).
func (b *DeltaBus) Following(workflowID string) bool { return b.followers.following(workflowID) }

// Lost is how many deltas were dropped: on this instance's full publish
// queue, or on its watchers' full buffers.
func (b *DeltaBus) Lost() int64 { return b.dropped.Load() + b.local.Lost() }

// Close stops publishing and following; deltas still queued are dropped.
func (b *DeltaBus) Close() error {
	b.stop()
	b.wg.Wait()
	return b.followers.close()
}

// channel is workflowID's delta channel: in the hash slot of the
// workflow id, so a cluster spreads the channels over its shards.
func (b *DeltaBus) channel(workflowID string) string {
	return b.prefix + ":deltas:{" + url.QueryEscape(workflowID) + "}"
}

// workflowOf is the workflow id of a delta channel ("" for another).
func (b *DeltaBus) workflowOf(channel string) string {
	head := b.prefix + ":deltas:{"
	if len(channel) <= len(head) || channel[:len(head)] != head || channel[len(channel)-1] != '}' {
		return ""
	}
	id, err := url.QueryUnescape(channel[len(head) : len(channel)-1])
	if err != nil {
		return ""
	}
	return id
}

// wireDelta is a delta on the wire.
type wireDelta struct {
	W string         `json:"w"`
	U string         `json:"u,omitempty"`
	R int            `json:"r"`
	S int            `json:"s"`
	G workflow.Stage `json:"g"`
	F string         `json:"f"`
	T string         `json:"t"`
}

// publishLoop publishes the queued deltas in order, a pipeline of those
// waiting at a time.
func (b *DeltaBus) publishLoop() {
	defer b.wg.Done()
	batch := make([]workflow.Delta, 0, deltaBatch)
	for {
		select {
		case <-b.ctx.Done():
			return
		case d := <-b.queue:
			batch = append(batch[:0], d)
		}
	more:
		for len(batch) < deltaBatch {
			select {
			case d := <-b.queue:
				batch = append(batch, d)
			default:
				break more
			}
		}
		b.publish(batch)
	}
}

// publish sends batch in one pipeline on a single Redis, and one SPUBLISH
// after another on a cluster, where a pipeline does not keep the order of
// commands (a cluster pipeline reordered a workflow's pieces under load);
// a failure drops what is left of the batch (deltas are not retried: the
// committed message follows anyway).
func (b *DeltaBus) publish(batch []workflow.Delta) {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	if b.cluster {
		for i, d := range batch {
			if err := b.rdb.SPublish(ctx, b.channel(d.WorkflowID), b.encode(d)).Err(); err != nil {
				b.dropped.Add(int64(len(batch) - i))
				return
			}
		}
		return
	}
	pipe := b.rdb.Pipeline()
	for _, d := range batch {
		pipe.Publish(ctx, b.channel(d.WorkflowID), b.encode(d))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		b.dropped.Add(int64(len(batch)))
	}
}

// encode is d's message on the channel.
func (b *DeltaBus) encode(d workflow.Delta) []byte {
	data, _ := json.Marshal(wireDelta{W: d.WorkflowID, U: d.UserID, R: d.Round, S: d.Step, G: d.Stage, F: d.Field, T: d.Text}) // strings and ints: never fails
	return data
}

// receive hands a message of a followed channel to the local watchers.
func (b *DeltaBus) receive(payload string) {
	var w wireDelta
	if err := json.Unmarshal([]byte(payload), &w); err != nil || w.W == "" {
		return
	}
	b.local.PublishDelta(workflow.Delta{WorkflowID: w.W, UserID: w.U, Round: w.R, Step: w.S, Stage: w.G, Field: w.F, Text: w.T})
}
