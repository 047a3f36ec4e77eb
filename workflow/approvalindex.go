package workflow

import (
	"context"
	"time"
)

// DueCursor is a place in an ApprovalIndex's order — the indexed
// expiresAt, then the workflow id — just after the entry it names. The zero
// DueCursor is the start of the index.
type DueCursor struct {
	// ExpiresAt is the entry's indexed expiresAt, at the store's own
	// resolution (a store hands back the value it indexed).
	ExpiresAt time.Time
	// ID is the entry's workflow id; "" only in the zero DueCursor.
	ID string
}

// IsZero reports whether c is the zero DueCursor: the start of the index,
// or, returned as next, the end of the entries due.
func (c DueCursor) IsZero() bool { return c.ID == "" }

// ApprovalIndex is a Store that keeps its workflows awaiting approval in an
// index ordered by their pending approval's ExpiresAt, so that finding the
// approvals due costs O(approvals due), never a listing of every workflow.
//
// Commit keeps the index: a commit that stores a workflow with status
// StatusAwaitingApproval and a PendingApproval indexes it under that
// approval's ExpiresAt (replacing its earlier entry), a commit that stores
// it with any other status, and DeleteWorkflow, take it out. The engine
// expires what DueApprovals returns through Commit under the version check,
// as a decision commits, so of an expiry and a decision racing for one
// approval exactly one applies, whichever instances run them.
type ApprovalIndex interface {
	// DueApprovals reads at most limit entries of the index after the
	// place after (the zero DueCursor: from the start) whose indexed
	// ExpiresAt is at or before now, in order — ExpiresAt, then workflow
	// id — and returns the ids among them of workflows stored awaiting
	// approval, and next, the place after the last entry read. It removes
	// the entries it reads of workflows gone or no longer awaiting
	// approval. next is the zero DueCursor once no entry due is left after
	// those read (a store that cannot tell may return a non-zero next when
	// it read limit entries: the call after returns none, and zero), so a
	// caller pages through every entry due, however many of them it cannot
	// act on, by passing next back until it is zero. Its
	// cost follows the entries read, not the store's size. An id may name
	// a workflow decided since: the caller reads the workflow and checks it.
	DueApprovals(ctx context.Context, now time.Time, after DueCursor, limit int) (ids []string, next DueCursor, err error)
	// BackfillApprovals indexes every workflow stored awaiting approval
	// that the index lacks — data written before the store kept it — and
	// returns how many it added. A store may remember having done it, so
	// that later calls (every instance calls it once at start) cost O(1).
	BackfillApprovals(ctx context.Context) (int, error)
}

// StoreWrapper is a Store that decorates another one (redacting traces,
// say): Unwrap returns the wrapped store, so that the engine finds the
// capabilities under it, such as an ApprovalIndex.
type StoreWrapper interface {
	Unwrap() Store
}

// StoreAs returns the part of s that is a T (a capability such as
// ApprovalIndex or StandingStore): s itself when it is one, else that of
// the store it wraps (StoreWrapper), else T's zero value (nil for an
// interface).
func StoreAs[T any](s Store) T {
	for s != nil {
		if c, ok := s.(T); ok {
			return c
		}
		w, ok := s.(StoreWrapper)
		if !ok {
			break
		}
		s = w.Unwrap()
	}
	var zero T
	return zero
}
