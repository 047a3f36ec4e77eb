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
	if err := checkLease(ctx, workflowID, owner); err != nil {
		return 0, err
	}
	if ttl <= 0 {
		return 0, workflow.Errorf(workflow.KindInvalid, "lease ttl %v is not positive", ttl)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.live(workflowID)
	if !ok {
		return 0, workflow.Errorf(workflow.KindNotFound, "workflow %s not found", workflowID)
	}
	now := s.now()
	held := rec.lease.owner != "" && now.Before(rec.lease.expires)
	if held && rec.lease.owner != owner {
		return 0, nil
	}
	if !held {
		rec.fence++
	}
	rec.lease = lease{owner: owner, expires: now.Add(ttl)}
	return rec.fence, nil
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
