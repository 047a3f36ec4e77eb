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
	if err := checkClaim(ctx, workflowID, owner, ttl); err != nil {
		return 0, err
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

// ClaimRoundLoad is ClaimRound whose script also returns the workflow's
// JSON and, when it is running, its messages, and the owner of the expired
// lease it took (the state's holder field, which a release clears): the
// claim that starts a run and the run's reads in one round trip
// (workflow.RoundLoader).
func (s *Store) ClaimRoundLoad(ctx context.Context, workflowID, owner string, ttl time.Duration) (_ workflow.RoundClaim, err error) {
	defer workflow.Wrap(&err, "redisstore.ClaimRoundLoad(%q, %q)", workflowID, owner)
	if err := checkClaim(ctx, workflowID, owner, ttl); err != nil {
		return workflow.RoundClaim{}, err
	}
	var reply []any
	var fence int64
	found, err := s.inSlot(ctx, workflowID, func(userID string) (bool, error) {
		k := s.keys.user(userID).workflow(workflowID)
		var err error
		reply, err = claimScript.Run(ctx, s.rdb, []string{k.state, k.lease, k.msgs}, owner, ttl.Milliseconds(), 1).Slice()
		if err != nil {
			return false, redisErr(err)
		}
		if len(reply) == 0 {
			return false, workflow.Errorf(workflow.KindInternal, "claim script replied with no fence")
		}
		var ok bool
		if fence, ok = reply[0].(int64); !ok {
			return false, workflow.Errorf(workflow.KindInternal, "claim script replied with fence %v", reply[0])
		}
		return fence >= 0, nil
	})
	switch {
	case err != nil:
		return workflow.RoundClaim{}, err
	case !found:
		return workflow.RoundClaim{}, workflow.Errorf(workflow.KindNotFound, "workflow %s not found", workflowID)
	case fence == 0:
		return workflow.RoundClaim{}, nil
	}
	c, err := decodeLoad(reply)
	if err != nil {
		// A corrupt state or message: the lease just taken is given back,
		// as workflow.ClaimRoundLoad does when a read fails.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
		defer cancel()
		_ = s.ReleaseRound(rctx, workflowID, owner)
		return workflow.RoundClaim{}, err
	}
	c.Fence = fence
	return c, nil
}

// releaseTimeout bounds the release of a lease whose load failed.
const releaseTimeout = 5 * time.Second

// decodeLoad decodes a loading claim's reply after its fence: the owner
// of the expired lease it took, the workflow's JSON and, when it is
// running, its messages.
func decodeLoad(reply []any) (workflow.RoundClaim, error) {
	var c workflow.RoundClaim
	var state string
	if len(reply) >= 3 {
		c.Expired, _ = reply[1].(string)
		state, _ = reply[2].(string)
	}
	if state == "" {
		return c, workflow.Errorf(workflow.KindInternal, "stored workflow has no state")
	}
	var err error
	if c.Workflow, err = decodeState([]byte(state)); err != nil {
		return c, err
	}
	if c.Workflow.Status == workflow.StatusRunning {
		c.Messages = make([]workflow.Message, len(reply)-3)
		for i, r := range reply[3:] {
			raw, _ := r.(string)
			if err := decodeMessage([]byte(raw), 1+int64(i), &c.Messages[i]); err != nil {
				return c, err
			}
		}
	}
	return c, nil
}

func checkClaim(ctx context.Context, workflowID, owner string, ttl time.Duration) error {
	if err := checkWorkflowID(ctx, workflowID, false); err != nil {
		return err
	}
	if err := checkID(ctx, "lease owner", owner); err != nil {
		return err
	}
	if ttl < time.Millisecond {
		return workflow.Errorf(workflow.KindInvalid, "lease ttl %v is under a millisecond", ttl)
	}
	return nil
}

// ReleaseRound deletes owner's lease (and the state's note that owner
// holds it); it does nothing when owner does not hold it.
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
	k := s.keys.user(userID).workflow(workflowID)
	return redisErr(releaseScript.Run(ctx, s.rdb, []string{k.lease, k.state}, owner).Err())
}
