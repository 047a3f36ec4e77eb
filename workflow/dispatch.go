package workflow

import (
	"context"
	"time"
)

// Dispatcher hands accepted rounds to the workers of every instance that
// runs them. Each accepted round (a create, a new round, a resume, an
// approval decision, a round requeued by a shutdown or left by a dead
// instance) is one entry; an idle worker of any instance receives it, and
// it stays pending, owned by the consumer that received it, until that
// consumer acks it (the round ended or paused) or requeues it. An entry its
// consumer neither acks nor touches for a while (the instance died, or left
// the entry because another instance holds the round's lease) is handed to
// another consumer by Reclaim.
//
// Dispatch is a hint, not the guard: the round's lease (Store.ClaimRound)
// still decides who runs it, so a round delivered twice runs once.
//
// Entries are spread over Partitions() partitions (a workflow always goes
// to the same one); a consumer receives from each. Implementations are safe
// for concurrent use; consumer names an instance (engine.Config.InstanceID).
type Dispatcher interface {
	// Partitions is the number of partitions, at least 1.
	Partitions() int
	// Enqueue offers workflowID's round to every consumer.
	Enqueue(ctx context.Context, workflowID string) error
	// Receive waits for one entry of partition and delivers it to consumer
	// alone. It returns ok false when none arrived within the
	// implementation's wait (at most a few seconds) or ctx ended; callers
	// loop.
	Receive(ctx context.Context, consumer string, partition int) (d Delivery, ok bool, err error)
	// Reclaim delivers to consumer up to max entries that other consumers
	// (or consumer itself) received but neither acked nor touched for at
	// least idle, with Delivery.Reclaimed set and Delivery.From naming the
	// consumer that held each. Entries beyond max stay pending where they
	// are, for a later Reclaim (this consumer's or another's).
	Reclaim(ctx context.Context, consumer string, idle time.Duration, max int) ([]Delivery, error)
	// Touch tells that consumer still works on d, so Reclaim leaves it
	// alone for another idle period.
	Touch(ctx context.Context, consumer string, d Delivery) error
	// Ack ends d: it is delivered to no one again.
	Ack(ctx context.Context, d Delivery) error
	// Requeue ends d and offers its round again as a new entry (keeping
	// Reclaimed), atomically: a round is never without an entry.
	Requeue(ctx context.Context, d Delivery) error
	// Leave forgets consumer (an instance shutting down) in every
	// partition where it holds no pending entry; where it still does, the
	// entries stay for Reclaim.
	Leave(ctx context.Context, consumer string) error
}

// Delivery is one entry of a Dispatcher handed to a consumer.
type Delivery struct {
	// WorkflowID is the workflow whose round the entry offers.
	WorkflowID string
	// Partition is the entry's partition.
	Partition int
	// Ref identifies the entry within its partition (for Redis, the stream
	// entry id).
	Ref string
	// Reclaimed marks an entry taken from a consumer that left it: its
	// round may have been running on an instance that died.
	Reclaimed bool
	// From is the consumer that left a reclaimed entry, when known.
	From string
}

// Dispatch events reported to a DispatchObserver.
const (
	DispatchEnqueued      = "enqueued"       // a round got an entry
	DispatchEnqueueFailed = "enqueue_failed" // it did not (the recovery scan will find it)
	DispatchReceived      = "received"       // an entry was taken by a worker here
	DispatchReclaimed     = "reclaimed"      // an entry another consumer left was taken here
	DispatchHandedOff     = "handed_off"     // an entry was requeued for another instance
	DispatchAcked         = "acked"          // an entry's round no longer runs
	DispatchLeft          = "left"           // an entry was left pending for Reclaim
)

// DispatchObserver is the part of an Observer that counts what the runner
// does with dispatcher entries (the Dispatch* events).
type DispatchObserver interface {
	Dispatched(event string)
}
