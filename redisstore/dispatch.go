package redisstore

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/workflow"
)

// Dispatch layout and defaults. Rounds are entries of Partitions streams,
//
//	<prefix>:dispatch:{p0} … <prefix>:dispatch:{p<N-1>}
//
// a workflow's always in partition fnv32a(id) % N, each stream with one
// consumer group, DispatchGroup, whose consumers are the instances
// (their engine.Config.InstanceID). An entry has the field wf (the
// workflow id) and, when another instance left the round, left=1. Each
// command touches one stream, so each partition is its own hash slot and
// a Redis Cluster spreads them over its shards. Acked entries are deleted
// (XACK and XDEL in one MULTI), so a stream's length is its backlog plus
// its pending entries.
const (
	DispatchGroup             = "workers"
	DefaultDispatchPartitions = 4
	MaxDispatchPartitions     = 256
	DefaultDispatchBlock      = 2 * time.Second
	dispatchField, leftField  = "wf", "left"
	reclaimCount              = 25
)

// DispatchOptions configures a Dispatcher. The zero value uses the
// defaults.
type DispatchOptions struct {
	// Partitions is the number of streams (DefaultDispatchPartitions when
	// 0). Every instance sharing the store must use the same number.
	Partitions int
	// Block is how long Receive waits for an entry (DefaultDispatchBlock
	// when 0): a shutting-down reader returns within it.
	Block time.Duration
}

// Dispatcher is the Redis Streams workflow.Dispatcher: XADD to enqueue,
// XREADGROUP to receive, XAUTOCLAIM to reclaim entries a dead consumer
// left, XCLAIM (JUSTID) to touch, XACK+XDEL to ack. It is safe for
// concurrent use.
type Dispatcher struct {
	rdb   redis.UniversalClient
	keys  []string
	block time.Duration

	mu    sync.Mutex
	ready bool // the consumer groups exist
}

var _ workflow.Dispatcher = (*Dispatcher)(nil)

// Client returns the store's Redis client (for the dispatcher and for
// operators' tools; the store keeps owning it).
func (s *Store) Client() redis.UniversalClient { return s.rdb }

// Dispatcher returns a dispatcher over the store's client and key prefix.
func (s *Store) Dispatcher(opts DispatchOptions) (*Dispatcher, error) {
	return NewDispatcher(s.rdb, s.opts.KeyPrefix, opts)
}

// NewDispatcher returns a dispatcher over client with keys under prefix
// (DefaultKeyPrefix when empty). It fails with KindInvalid for a prefix
// with braces or a partition count outside 1..MaxDispatchPartitions.
func NewDispatcher(client redis.UniversalClient, prefix string, opts DispatchOptions) (*Dispatcher, error) {
	if prefix == "" {
		prefix = DefaultKeyPrefix
	}
	if strings.ContainsAny(prefix, "{}") {
		return nil, workflow.Errorf(workflow.KindInvalid, "key prefix %q must not contain braces", prefix)
	}
	n := opts.Partitions
	if n == 0 {
		n = DefaultDispatchPartitions
	}
	if n < 1 || n > MaxDispatchPartitions {
		return nil, workflow.Errorf(workflow.KindInvalid, "dispatch partitions must be between 1 and %d, not %d", MaxDispatchPartitions, n)
	}
	block := opts.Block
	if block <= 0 {
		block = DefaultDispatchBlock
	}
	d := &Dispatcher{rdb: client, block: block}
	for p := range n {
		d.keys = append(d.keys, DispatchKey(prefix, p))
	}
	return d, nil
}

// DispatchKey names partition p's stream under prefix.
func DispatchKey(prefix string, p int) string {
	return prefix + ":dispatch:{p" + strconv.Itoa(p) + "}"
}

// Partitions is the number of streams.
func (d *Dispatcher) Partitions() int { return len(d.keys) }

func (d *Dispatcher) partitionOf(workflowID string) int {
	return hashPartition(workflowID, len(d.keys))
}

// Enqueue adds an entry for workflowID to its partition's stream.
func (d *Dispatcher) Enqueue(ctx context.Context, workflowID string) (err error) {
	defer workflow.Wrap(&err, "redisstore.Enqueue(%q)", workflowID)
	if err := checkWorkflowID(ctx, workflowID, true); err != nil {
		return err
	}
	key := d.keys[d.partitionOf(workflowID)]
	return redisErr(d.rdb.XAdd(ctx, &redis.XAddArgs{Stream: key, Values: []any{dispatchField, workflowID}}).Err())
}

// Receive reads one new entry of partition p for consumer, blocking up to
// the dispatcher's Block.
func (d *Dispatcher) Receive(ctx context.Context, consumer string, p int) (_ workflow.Delivery, _ bool, err error) {
	defer workflow.Wrap(&err, "redisstore.Receive(%q, %d)", consumer, p)
	if p < 0 || p >= len(d.keys) {
		return workflow.Delivery{}, false, workflow.Errorf(workflow.KindInvalid, "partition %d does not exist (%d partitions)", p, len(d.keys))
	}
	if err := checkID(ctx, "consumer", consumer); err != nil {
		return workflow.Delivery{}, false, err
	}
	var streams []redis.XStream
	for attempt := 0; ; attempt++ {
		if err := d.ensureGroups(ctx); err != nil {
			return workflow.Delivery{}, false, err
		}
		streams, err = d.rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: DispatchGroup, Consumer: consumer,
			Streams: []string{d.keys[p], ">"}, Count: 1, Block: d.block}).Result()
		if isNoGroup(err) && attempt == 0 { // the stream was deleted (or Redis restarted empty)
			d.forgetGroups()
			continue
		}
		break
	}
	if errors.Is(err, redis.Nil) || (err != nil && ended(ctx)) {
		return workflow.Delivery{}, false, nil
	}
	if err != nil {
		return workflow.Delivery{}, false, redisErr(err)
	}
	for _, s := range streams {
		for _, m := range s.Messages {
			if dl, ok := d.delivery(ctx, p, m); ok {
				return dl, true, nil
			}
		}
	}
	return workflow.Delivery{}, false, nil
}

// ended reports whether ctx is done or its deadline has passed. The
// client honours context deadlines (see Open): a block cut by ctx's
// deadline fails with an i/o timeout, possibly just before ctx's own timer
// marks it done.
func ended(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d)
}

// delivery turns a stream entry into a delivery; a malformed one (no
// workflow id) is acked and dropped.
func (d *Dispatcher) delivery(ctx context.Context, p int, m redis.XMessage) (workflow.Delivery, bool) {
	id, _ := m.Values[dispatchField].(string)
	dl := workflow.Delivery{WorkflowID: id, Partition: p, Ref: m.ID}
	if id == "" {
		_ = d.Ack(ctx, dl)
		return dl, false
	}
	left, _ := m.Values[leftField].(string)
	dl.Reclaimed = left == "1"
	return dl, true
}

// Reclaim moves to consumer entries of any consumer pending for at least
// idle, up to max. Per partition it first lists idle entries with their
// holders (XPENDING … IDLE, the one round trip when nothing is idle), then
// claims them with XAUTOCLAIM from the first one listed, which checks the
// idle time again atomically, so two instances never both get one. Each
// delivery names its previous holder (Delivery.From). It claims no more
// than max: entries beyond it stay pending, idle, for another instance's
// Reclaim, and once max are claimed the partitions left are not read.
func (d *Dispatcher) Reclaim(ctx context.Context, consumer string, idle time.Duration, max int) (_ []workflow.Delivery, err error) {
	defer workflow.Wrap(&err, "redisstore.Reclaim(%q)", consumer)
	if err := checkID(ctx, "consumer", consumer); err != nil {
		return nil, err
	}
	if max <= 0 {
		return nil, nil
	}
	if err := d.ensureGroups(ctx); err != nil {
		return nil, err
	}
	var out []workflow.Delivery
	for p, key := range d.keys {
		room := int64(min(max-len(out), reclaimCount))
		if room <= 0 {
			break
		}
		idleOnes, err := d.rdb.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: key, Group: DispatchGroup,
			Idle: idle, Start: "-", End: "+", Count: room}).Result()
		if isNoGroup(err) {
			d.forgetGroups()
			continue
		}
		if err != nil {
			return out, redisErr(err)
		}
		if len(idleOnes) == 0 {
			continue
		}
		holder := make(map[string]string, len(idleOnes))
		for _, e := range idleOnes {
			holder[e.ID] = e.Consumer
		}
		msgs, _, err := d.rdb.XAutoClaim(ctx, &redis.XAutoClaimArgs{Stream: key, Group: DispatchGroup,
			Consumer: consumer, MinIdle: idle, Start: idleOnes[0].ID, Count: room}).Result()
		if err != nil {
			return out, redisErr(err)
		}
		for _, m := range msgs {
			dl, ok := d.delivery(ctx, p, m)
			if !ok {
				continue
			}
			dl.Reclaimed, dl.From = true, holder[m.ID]
			out = append(out, dl)
		}
	}
	return out, nil
}

// Touch resets dl's idle time and makes it consumer's (XCLAIM … 0 JUSTID,
// which leaves its delivery count alone); an entry no longer pending is
// not claimed.
func (d *Dispatcher) Touch(ctx context.Context, consumer string, dl workflow.Delivery) (err error) {
	defer workflow.Wrap(&err, "redisstore.Touch(%q)", dl.WorkflowID)
	key, err := d.key(dl)
	if err != nil {
		return err
	}
	return redisErr(d.rdb.XClaimJustID(ctx, &redis.XClaimArgs{Stream: key, Group: DispatchGroup, Consumer: consumer,
		MinIdle: 0, Messages: []string{dl.Ref}}).Err())
}

// Ack acknowledges and deletes dl's entry, in one MULTI on its stream.
func (d *Dispatcher) Ack(ctx context.Context, dl workflow.Delivery) (err error) {
	defer workflow.Wrap(&err, "redisstore.Ack(%q)", dl.WorkflowID)
	key, err := d.key(dl)
	if err != nil {
		return err
	}
	_, err = d.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.XAck(ctx, key, DispatchGroup, dl.Ref)
		p.XDel(ctx, key, dl.Ref)
		return nil
	})
	return redisErr(err)
}

// Requeue adds a new entry for dl's round (left=1 when dl.Reclaimed) and
// acks and deletes dl's, in one MULTI on its stream.
func (d *Dispatcher) Requeue(ctx context.Context, dl workflow.Delivery) (err error) {
	defer workflow.Wrap(&err, "redisstore.Requeue(%q)", dl.WorkflowID)
	key, err := d.key(dl)
	if err != nil {
		return err
	}
	if err := checkWorkflowID(ctx, dl.WorkflowID, true); err != nil {
		return err
	}
	values := []any{dispatchField, dl.WorkflowID}
	if dl.Reclaimed {
		values = append(values, leftField, "1")
	}
	_, err = d.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.XAdd(ctx, &redis.XAddArgs{Stream: key, Values: values})
		p.XAck(ctx, key, DispatchGroup, dl.Ref)
		p.XDel(ctx, key, dl.Ref)
		return nil
	})
	return redisErr(err)
}

// leaveScript deletes consumer ARGV[2] from group ARGV[1] of stream
// KEYS[1] if it holds no pending entry (XGROUP DELCONSUMER would drop
// them); it returns -1 when it kept the consumer.
var leaveScript = redis.NewScript(`
local pending = redis.call('XPENDING', KEYS[1], ARGV[1], '-', '+', 1, ARGV[2])
if #pending == 0 then
  return redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], ARGV[2])
end
return -1
`)

// Leave deletes consumer from each stream's group where it holds no
// pending entry, so instances that came and went do not pile up in
// XINFO CONSUMERS.
func (d *Dispatcher) Leave(ctx context.Context, consumer string) (err error) {
	defer workflow.Wrap(&err, "redisstore.Leave(%q)", consumer)
	if err := checkID(ctx, "consumer", consumer); err != nil {
		return err
	}
	for _, key := range d.keys {
		err := leaveScript.Run(ctx, d.rdb, []string{key}, DispatchGroup, consumer).Err()
		if err != nil && !strings.Contains(err.Error(), "NOGROUP") { // no stream or group: nothing to leave
			return redisErr(err)
		}
	}
	return nil
}

func (d *Dispatcher) key(dl workflow.Delivery) (string, error) {
	if dl.Partition < 0 || dl.Partition >= len(d.keys) || dl.Ref == "" {
		return "", workflow.Errorf(workflow.KindInvalid, "delivery %+v is not one of this dispatcher's", dl)
	}
	return d.keys[dl.Partition], nil
}

// ensureGroups creates each stream's consumer group (from the stream's
// start, so entries added before it are delivered) once.
func (d *Dispatcher) ensureGroups(ctx context.Context) error {
	d.mu.Lock()
	ready := d.ready
	d.mu.Unlock()
	if ready {
		return nil
	}
	for _, key := range d.keys {
		err := d.rdb.XGroupCreateMkStream(ctx, key, DispatchGroup, "0").Err()
		if err != nil && !strings.HasPrefix(err.Error(), "BUSYGROUP") {
			return redisErr(err)
		}
	}
	d.mu.Lock()
	d.ready = true
	d.mu.Unlock()
	return nil
}

func (d *Dispatcher) forgetGroups() {
	d.mu.Lock()
	d.ready = false
	d.mu.Unlock()
}

func isNoGroup(err error) bool { return err != nil && strings.HasPrefix(err.Error(), "NOGROUP") }
