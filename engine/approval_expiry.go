package engine

import (
	"context"
	"time"

	"github.com/twostep/twostep/workflow"
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
	var after workflow.DueCursor
	for {
		ids, next, err := e.approvals.DueApprovals(ctx, now, after, dueBatch)
		if err != nil {
			return n, err
		}
		for _, id := range ids {
			wf, err := e.store.GetWorkflow(ctx, id)
			if workflow.KindOf(err) == workflow.KindNotFound {
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
		page, next, err := e.store.ListAll(ctx, workflow.Page{Limit: 200, Cursor: cursor})
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
func (e *Engine) expireIfDue(ctx context.Context, wf *workflow.Workflow) (bool, error) {
	if wf.Status != workflow.StatusAwaitingApproval || wf.PendingApproval == nil || e.now().Before(wf.PendingApproval.ExpiresAt) {
		return false, nil
	}
	if _, err := e.expire(ctx, wf); err != nil {
		if k := workflow.KindOf(err); k == workflow.KindConflict || k == workflow.KindTooMany {
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
				e.log.Warn().AnErr("err", err).Msg("indexing pending approvals failed; retrying at the next poll")
			} else if n > 0 {
				e.log.Info().Int("count", n).Msg("pending approvals indexed")
			}
		}
		if n, err := e.ExpireApprovals(r.recv); err != nil && r.recv.Err() == nil {
			e.log.Warn().AnErr("err", err).Msg("expiring approvals failed")
		} else if n > 0 {
			e.log.Info().Int("count", n).Msg("approvals expired")
		}
		select {
		case <-r.recv.Done():
			return
		case <-t.C:
		}
	}
}
