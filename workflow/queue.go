package workflow

import (
	"slices"
	"time"
)

// OnBusy says what a new round does when the workflow's round is still
// running or awaiting approval (DESIGN §10.3).
type OnBusy string

// The onBusy choices. OnBusyReject is the default.
const (
	// OnBusyReject refuses the new round with KindConflict.
	OnBusyReject OnBusy = "reject"
	// OnBusyEnqueue queues it: it starts when the rounds before it end.
	OnBusyEnqueue OnBusy = "enqueue"
	// OnBusyInterrupt queues it first and ends the running round at its
	// next safe point (between phases, never inside an action), so it
	// starts next.
	OnBusyInterrupt OnBusy = "interrupt"
)

// Valid reports whether b names a known choice ("" is the default).
func (b OnBusy) Valid() bool {
	return b == "" || b == OnBusyReject || b == OnBusyEnqueue || b == OnBusyInterrupt
}

// MaxQueuedRounds bounds a workflow's queued rounds: one more is refused
// with KindTooMany.
const MaxQueuedRounds = 20

// QueuedRound is a round waiting for the workflow's current round to end.
// Its user message is made when it starts, with the id and documents
// chosen (and the documents' bytes stored) when it was queued.
type QueuedRound struct {
	// MessageID is the id its user message will have.
	MessageID string `json:"messageId"`
	Prompt    string `json:"prompt"`
	// Documents are its uploads, stored with the queueing commit.
	Documents []Document `json:"documents,omitempty"`
	// Interrupt: it ends the running round at its next safe point
	// instead of waiting for it to end.
	Interrupt bool      `json:"interrupt,omitempty"`
	QueuedAt  time.Time `json:"queuedAt"`
}

// CloneQueue returns a deep copy of q (nil for empty).
func CloneQueue(q []QueuedRound) []QueuedRound {
	if len(q) == 0 {
		return nil
	}
	c := slices.Clone(q)
	for i := range c {
		c[i].Documents = slices.Clone(q[i].Documents)
	}
	return c
}

// Interrupting reports whether the first queued round interrupts the
// running one.
func (w *Workflow) Interrupting() bool {
	return len(w.QueuedRounds) > 0 && w.QueuedRounds[0].Interrupt
}

// InsertQueued adds q to w's queue: an interrupting round after the
// interrupting ones already at its head, any other at the end.
func InsertQueued(w *Workflow, q QueuedRound) {
	i := len(w.QueuedRounds)
	if q.Interrupt {
		i = 0
		for i < len(w.QueuedRounds) && w.QueuedRounds[i].Interrupt {
			i++
		}
	}
	w.QueuedRounds = slices.Insert(CloneQueue(w.QueuedRounds), i, q)
}
