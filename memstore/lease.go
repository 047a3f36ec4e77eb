package memstore

import (
	"context"
	"time"

	"github.com/twostep/twostep/workflow"
)

// ClaimRound takes or renews owner's lease on the workflow's round until ttl
// passes on the store's clock. It returns false while another owner holds an
// unexpired lease, and KindNotFound for an unknown workflow.
func (s *Store) ClaimRound(ctx context.Context, workflowID, owner string, ttl time.Duration) (_ bool, err error) {
	defer workflow.Wrap(&err, "memstore.ClaimRound(%q, %q)", workflowID, owner)
	if err := checkLease(ctx, workflowID, owner); err != nil {
		return false, err
	}
	if ttl <= 0 {
		return false, workflow.Errorf(workflow.KindInvalid, "lease ttl %v is not positive", ttl)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.wfs[workflowID]
	if !ok {
		return false, workflow.Errorf(workflow.KindNotFound, "workflow %s not found", workflowID)
	}
	now := s.now()
	if rec.lease.owner != "" && rec.lease.owner != owner && now.Before(rec.lease.expires) {
		return false, nil
	}
	rec.lease = lease{owner: owner, expires: now.Add(ttl)}
	return true, nil
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
	if rec, ok := s.wfs[workflowID]; ok && rec.lease.owner == owner {
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
