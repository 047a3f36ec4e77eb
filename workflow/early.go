package workflow

import (
	"sync"
	"time"
)

// EarlyStart is the handle of a Stage 2 call a mode started while Stage
// 1's reply was still streaming (ModelCall.Early, DESIGN §11.2). Whether
// the call stands is known only once Stage 1 has ended: the mode then
// settles it, once, whether the call has returned yet or not, and must
// wait for the call to return before its next commit. The engine records
// the call's trace (discarded or not, with its overlap), counts it and
// ends its span when both have happened. Safe for concurrent use.
type EarlyStart struct {
	mu        sync.Mutex
	settled   bool
	discarded bool
	stage1End time.Time
	waiting   []func(discarded bool, stage1End time.Time)
}

// Settle records the outcome: Stage 1 ended at stage1End, and discarded
// says the call's reply is not used (Stage 1's whole reply was rejected,
// or accepted with other values than those the call was started from).
// Only the first call counts.
func (e *EarlyStart) Settle(discarded bool, stage1End time.Time) {
	e.mu.Lock()
	if e.settled {
		e.mu.Unlock()
		return
	}
	e.settled, e.discarded, e.stage1End = true, discarded, stage1End
	waiting := e.waiting
	e.waiting = nil
	e.mu.Unlock()
	for _, f := range waiting {
		f(discarded, stage1End)
	}
}

// Settled reports whether Settle was called, and its outcome.
func (e *EarlyStart) Settled() (settled, discarded bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.settled, e.discarded
}

// WhenSettled calls f with the outcome once Settle is called: at once, on
// this goroutine, when it was already; else on Settle's.
func (e *EarlyStart) WhenSettled(f func(discarded bool, stage1End time.Time)) {
	e.mu.Lock()
	if !e.settled {
		e.waiting = append(e.waiting, f)
		e.mu.Unlock()
		return
	}
	discarded, end := e.discarded, e.stage1End
	e.mu.Unlock()
	f(discarded, end)
}
