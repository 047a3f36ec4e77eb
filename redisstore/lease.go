package redisstore

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/workflow"
)

// Running returns the ids of the workflows whose stored status is
// StatusRunning. The running set may hold stale ids (a commit that lost its
// version race after adding the id, a crash between a commit and its SREM);
// each id is checked against the workflow's state, so only running
// workflows are returned.
func (s *Store) Running(ctx context.Context) (_ []string, err error) {
	defer workflow.Wrap(&err, "redisstore.Running")
	ids, err := s.rdb.SMembers(ctx, s.keys.running()).Result()
	if err != nil {
		return nil, redisErr(err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.StringCmd, len(ids))
	for i, id := range ids {
		cmds[i] = pipe.HGet(ctx, s.keys.workflow(id).state, "status")
	}
	_, _ = pipe.Exec(ctx) // redis.Nil for gone workflows; other errors are checked per command
	var out []string
	for i, cmd := range cmds {
		status, err := cmd.Result()
		switch {
		case errors.Is(err, redis.Nil):
		case err != nil:
			return nil, redisErr(err)
		case status == string(workflow.StatusRunning):
			out = append(out, ids[i])
		}
	}
	return out, nil
}

// ClaimRound takes or renews owner's lease (SET PX, renewed only when owner
// holds it) in one script. It returns false while another owner holds an
// unexpired lease, and KindNotFound for an unknown workflow.
func (s *Store) ClaimRound(ctx context.Context, workflowID, owner string, ttl time.Duration) (_ bool, err error) {
	defer workflow.Wrap(&err, "redisstore.ClaimRound(%q, %q)", workflowID, owner)
	if err := checkWorkflowID(ctx, workflowID, false); err != nil {
		return false, err
	}
	if err := checkID(ctx, "lease owner", owner); err != nil {
		return false, err
	}
	if ttl < time.Millisecond {
		return false, workflow.Errorf(workflow.KindInvalid, "lease ttl %v is under a millisecond", ttl)
	}
	k := s.keys.workflow(workflowID)
	n, err := claimScript.Run(ctx, s.rdb, []string{k.state, k.lease}, owner, ttl.Milliseconds()).Int64()
	if err != nil {
		return false, redisErr(err)
	}
	if n < 0 {
		return false, workflow.Errorf(workflow.KindNotFound, "workflow %s not found", workflowID)
	}
	return n == 1, nil
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
	return redisErr(releaseScript.Run(ctx, s.rdb, []string{s.keys.workflow(workflowID).lease}, owner).Err())
}
