package memstore

import (
	"context"
	"time"

	"github.com/twostep/twostep/workflow"
)

// ClaimRound takes or renews owner's lease on the workflow's round until ttl
// passes on the store's clock. It returns the lease's fencing token, 0 while
// another owner holds an unexpired lease, and KindNotFound for an unknown
// workflow. Taking the lease increments the workflow's fence; renewing it
// keeps the fence.
func (s *Store) ClaimRound(ctx context.Context, workflowID, owner string, ttl time.Duration) (_ int64, err error) {
	defer workflow.Wrap(&err, "memstore.ClaimRound(%q, %q)", workflowID, owner)
	if err := checkClaim(ctx, workflowID, owner, ttl); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.live(workflowID)
	if !ok {
		return 0, workflow.Errorf(workflow.KindNotFound, "workflow %s not found", workflowID)
	}
	fence, _ := s.claimLocked(rec, owner, ttl)
	return fence, nil
}

// ClaimRoundLoad is ClaimRound that also returns, read under the same
// lock, the workflow, its messages while it runs, and the owner of the
// expired lease the claim took (workflow.RoundLoader).
func (s *Store) ClaimRoundLoad(ctx context.Context, workflowID, owner string, ttl time.Duration) (_ workflow.RoundClaim, err error) {
	defer workflow.Wrap(&err, "memstore.ClaimRoundLoad(%q, %q)", workflowID, owner)
	if err := checkClaim(ctx, workflowID, owner, ttl); err != nil {
		return workflow.RoundClaim{}, err
	}
	s.mu.Lock()
	rec, ok := s.live(workflowID)
	if !ok {
		s.mu.Unlock()
		return workflow.RoundClaim{}, workflow.Errorf(workflow.KindNotFound, "workflow %s not found", workflowID)
	}
	fence, expired := s.claimLocked(rec, owner, ttl)
	state, msgs := rec.state, rec.msgs[:len(rec.msgs):len(rec.msgs)]
	s.mu.Unlock()
	if fence == 0 {
		return workflow.RoundClaim{}, nil
	}
	// Stored workflows and messages are never changed, only replaced or
	// appended to: copying them outside the lock is safe.
	c := workflow.RoundClaim{Fence: fence, Workflow: copyOf(state), Expired: expired}
	if c.Workflow.Status == workflow.StatusRunning {
		c.Messages = copyMessages(msgs)
	}
	return c, nil
}

// claimLocked takes or renews owner's lease on rec (s.mu held): it returns
// the fence (0 when another owner holds an unexpired lease) and, when the
// claim took a lease that had run out unreleased, its owner.
func (s *Store) claimLocked(rec *record, owner string, ttl time.Duration) (fence int64, expired string) {
	now := s.now()
	held := rec.lease.owner != "" && now.Before(rec.lease.expires)
	if held && rec.lease.owner != owner {
		return 0, ""
	}
	if !held {
		rec.fence++
		expired = rec.lease.owner // "" once released
	}
	rec.lease = lease{owner: owner, expires: now.Add(ttl)}
	return rec.fence, expired
}

func checkClaim(ctx context.Context, workflowID, owner string, ttl time.Duration) error {
	if err := checkLease(ctx, workflowID, owner); err != nil {
		return err
	}
	if ttl <= 0 {
		return workflow.Errorf(workflow.KindInvalid, "lease ttl %v is not positive", ttl)
	}
	return nil
}

// ReleaseRound drops owner's lease; it does nothing when owner does not hold
// it or the workflow is gone.
func (s *Store) ReleaseRound(ctx context.Context, workflowID, owner string) (err error) {
	defer workflow.Wrap(&err, "memstore.ReleaseRound(%q, %q)", workflowID, owner)
	if err := checkLease(ctx, workflowID, owner); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if rec, ok := s.live(workflowID); ok && rec.lease.owner == owner {
		rec.lease = lease{}
	}
	return nil
}

func checkLease(ctx context.Context, workflowID, owner string) error {
	if err := checkID(ctx, "workflow id", workflowID); err != nil {
		return err
	}
	return checkID(ctx, "lease owner", owner)
}
