package redisstore

import (
	"context"
	"time"

	"github.com/twostep/twostep/workflow"
)

// ClaimRound takes or renews owner's lease (SET PX, renewed only when owner
// holds it) in one script. It returns the lease's fencing token (kept in the
// workflow's state hash, incremented when the lease is taken), 0 while
// another owner holds an unexpired lease, and KindNotFound for an unknown
// workflow.
func (s *Store) ClaimRound(ctx context.Context, workflowID, owner string, ttl time.Duration) (_ int64, err error) {
	defer workflow.Wrap(&err, "redisstore.ClaimRound(%q, %q)", workflowID, owner)
	if err := checkWorkflowID(ctx, workflowID, false); err != nil {
		return 0, err
	}
	if err := checkID(ctx, "lease owner", owner); err != nil {
		return 0, err
	}
	if ttl < time.Millisecond {
		return 0, workflow.Errorf(workflow.KindInvalid, "lease ttl %v is under a millisecond", ttl)
	}
	var n int64
	found, err := s.inSlot(ctx, workflowID, func(userID string) (bool, error) {
		k := s.keys.user(userID).workflow(workflowID)
		var err error
		n, err = claimScript.Run(ctx, s.rdb, []string{k.state, k.lease}, owner, ttl.Milliseconds()).Int64()
		if err != nil {
			return false, redisErr(err)
		}
		return n >= 0, nil
	})
	if err != nil {
		return 0, err
	}
	if !found {
		return 0, workflow.Errorf(workflow.KindNotFound, "workflow %s not found", workflowID)
	}
	return n, nil
}

// ReleaseRound deletes owner's lease; it does nothing when owner does not
// hold it.
func (s *Store) ReleaseRound(ctx context.Context, workflowID, owner string) (err error) {
	defer workflow.Wrap(&err, "redisstore.ReleaseRound(%q, %q)", workflowID, owner)
	if err := checkWorkflowID(ctx, workflowID, false); err != nil {
		if workflow.KindOf(err) == workflow.KindNotFound {
			return nil
		}
		return err
	}
	if err := checkID(ctx, "lease owner", owner); err != nil {
		return err
	}
	userID, _, err := s.ownerOf(ctx, workflowID)
	if err != nil {
		if workflow.KindOf(err) == workflow.KindNotFound {
			return nil
		}
		return err
	}
	return redisErr(releaseScript.Run(ctx, s.rdb, []string{s.keys.user(userID).workflow(workflowID).lease}, owner).Err())
}
