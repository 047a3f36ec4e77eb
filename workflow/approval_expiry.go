package workflow

import (
	"context"
	"time"
)

// ApprovalPollInterval is how often each instance asks an ApprovalIndex
// store for the approvals due: an approval is expired about this long
// after its expiresAt at the latest (a decision arriving late expires it
// at once).
const ApprovalPollInterval = time.Second

// ApprovalScanInterval is how often each instance lists every workflow of
// a store that keeps no ApprovalIndex to find overdue approvals.
const ApprovalScanInterval = time.Minute

// dueBatch is how many due approvals one DueApprovals call asks for; a
// poll pages on, from the cursor each call returns, until the index holds
// no more entries due.
const dueBatch = 100

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

// ApprovalIndexOf returns the approval index of s: s itself when it is an
// ApprovalIndex, else that of the store it wraps (StoreWrapper), else nil.
func ApprovalIndexOf(s Store) ApprovalIndex {
	for s != nil {
		if ai, ok := s.(ApprovalIndex); ok {
			return ai
		}
		w, ok := s.(StoreWrapper)
		if !ok {
			return nil
		}
		s = w.Unwrap()
	}
	return nil
}

// ExpireApprovals rejects, with comment "expired", every pending approval
// past its expiresAt, and returns how many it expired. With an
// ApprovalIndex store it pages through the approvals due at its start,
// dueBatch at a time; otherwise it reads the store's listing, one page of
// 200 workflows at a time. Any instance may run it: each expiry is a commit
// under the version check, so a decision or another instance's expiry of
// the same approval lets only one of them apply.
//
// An expiry obeys the user's running limit: it moves the workflow back to
// running (the step rejected, the round going on with the next step), and
// a commit that would put the user over MaxRunningPerUser is refused. Such
// an approval stays pending, shown past its expiresAt, and is expired at
// the first poll after one of the user's rounds ends — the same as a
// person's decision, which the limit refuses too. The poll pages past it,
// so however many entries are held back so, every other approval due is
// expired at the same poll.
func (e *Engine) ExpireApprovals(ctx context.Context) (int, error) {
	if e.approvals == nil {
		return e.scanApprovals(ctx)
	}
	n, now := 0, e.now()
	var after DueCursor
	for {
		ids, next, err := e.approvals.DueApprovals(ctx, now, after, dueBatch)
		if err != nil {
			return n, err
		}
		for _, id := range ids {
			wf, err := e.store.GetWorkflow(ctx, id)
			if KindOf(err) == KindNotFound {
				continue
			}
			if err != nil {
				return n, err
			}
			ok, err := e.expireIfDue(ctx, wf)
			if err != nil {
				return n, err
			}
			if ok {
				n++
			}
		}
		if next.IsZero() {
			return n, nil
		}
		after = next
	}
}

// scanApprovals is ExpireApprovals over the store's listing, for a store
// without an ApprovalIndex.
func (e *Engine) scanApprovals(ctx context.Context) (int, error) {
	n := 0
	cursor := ""
	for {
		page, next, err := e.store.ListAll(ctx, Page{Limit: 200, Cursor: cursor})
		if err != nil {
			return n, err
		}
		for _, wf := range page {
			ok, err := e.expireIfDue(ctx, wf)
			if err != nil {
				return n, err
			}
			if ok {
				n++
			}
		}
		if next == "" {
			return n, nil
		}
		cursor = next
	}
}

// expireIfDue expires wf's pending approval when it is past its expiresAt
// and reports whether it did. A conflict (decided, or expired by another
// instance, in between) is not an error; neither is the user's running
// limit, which leaves the approval for the next poll.
func (e *Engine) expireIfDue(ctx context.Context, wf *Workflow) (bool, error) {
	if wf.Status != StatusAwaitingApproval || wf.PendingApproval == nil || e.now().Before(wf.PendingApproval.ExpiresAt) {
		return false, nil
	}
	if _, err := e.expire(ctx, wf); err != nil {
		if k := KindOf(err); k == KindConflict || k == KindTooMany {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// expiryLoop expires overdue approvals while the runner runs, when the
// engine has an approval policy: at once and then every
// ApprovalPollInterval with an ApprovalIndex store (which it backfills
// first, retrying each poll until that succeeds), else every
// ApprovalScanInterval.
func (r *runner) expiryLoop() {
	e := r.e
	if e.cfg.Approvals == nil {
		return
	}
	every, backfilled := ApprovalScanInterval, true
	if e.approvals != nil {
		every, backfilled = ApprovalPollInterval, false
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if !backfilled {
			n, err := e.approvals.BackfillApprovals(r.recv)
			backfilled = err == nil
			if err != nil && r.recv.Err() == nil {
				e.log.Warn("indexing pending approvals failed; retrying at the next poll", "err", err)
			} else if n > 0 {
				e.log.Info("pending approvals indexed", "count", n)
			}
		}
		if n, err := e.ExpireApprovals(r.recv); err != nil && r.recv.Err() == nil {
			e.log.Warn("expiring approvals failed", "err", err)
		} else if n > 0 {
			e.log.Info("approvals expired", "count", n)
		}
		select {
		case <-r.recv.Done():
			return
		case <-t.C:
		}
	}
}
