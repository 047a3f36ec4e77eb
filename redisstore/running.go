package redisstore

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/workflow"
)

// Running returns the ids of the workflows whose stored status is
// StatusRunning. It reads every partition of the running set (one
// pipeline, which on a cluster reaches every shard holding one) and checks
// each entry against its workflow's state (one more pipeline). The running
// set may hold stale entries (a commit that lost its version race after
// adding the entry, a crash between a commit and its SREM, a workflow
// expired while it ran); only running workflows are returned.
func (s *Store) Running(ctx context.Context) (_ []string, err error) {
	defer workflow.Wrap(&err, "redisstore.Running")
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	pipe := s.rdb.Pipeline()
	parts := make([]*redis.StringSliceCmd, partitions)
	for i := range parts {
		parts[i] = pipe.SMembers(ctx, s.keys.runningPart(i))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, redisErr(err)
	}
	var ids, users []string
	for _, cmd := range parts {
		for _, r := range cmd.Val() {
			if id, user, ok := parseRef(r); ok {
				ids, users = append(ids, id), append(users, user)
			}
		}
	}
	return s.runningOf(ctx, ids, users, func(p redis.Pipeliner, e listed) {
		s.index.unlisted(e.id)
		p.SRem(ctx, s.keys.runningPart(partition(e.id)), ref(e.id, e.user))
	})
}

// runningOf returns the ids (each of the user at the same index of users)
// whose workflow is stored with status running and belongs to that user.
// Entries whose workflow is gone for good are removed with unlist (see
// prune).
func (s *Store) runningOf(ctx context.Context, ids, users []string, unlist func(redis.Pipeliner, listed)) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.SliceCmd, len(ids))
	for i, id := range ids {
		cmds[i] = pipe.HMGet(ctx, s.keys.user(users[i]).workflow(id).state, "status", "user")
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, redisErr(err)
	}
	var out []string
	var gone []listed
	for i, cmd := range cmds {
		vals := cmd.Val() // nil fields for a workflow that is gone
		status, _ := vals[0].(string)
		user, _ := vals[1].(string)
		if status == string(workflow.StatusRunning) && user == users[i] {
			out = append(out, ids[i])
		}
		if vals[0] == nil && vals[1] == nil {
			gone = append(gone, listed{id: ids[i], user: users[i]})
		}
	}
	s.prune(ctx, gone, unlist)
	return out, nil
}

// unlistRunning removes the workflow's entry from its running-set
// partition, unless the workflow runs again by then. (The user's running
// set is kept by the commit script.)
//
// It runs after the commit that ended or paused the workflow, as its own
// command (the partition is a store-wide key, in another slot than the
// workflow's), so a later commit may have made the workflow run again in
// between: an approval decided or expired on another instance the moment
// the round paused. That commit added the entry before its script and
// again after it (Commit), so removing it here would leave a running
// workflow that the recovery scan never finds: a round with no runner when
// its dispatch is lost (an unstarted instance's, or a failed enqueue). So
// the entry is removed first and the status read after: a workflow that
// runs has its entry put back. Either this read follows that commit's
// script and puts the entry back, or that commit's second add follows
// this removal.
func (s *Store) unlistRunning(ctx context.Context, id, userID string) error {
	s.index.unlisted(id)
	key, entry := s.keys.runningPart(partition(id)), ref(id, userID)
	status, err := s.unlistThenStatus(ctx, key, entry, s.keys.user(userID).workflow(id).state)
	if errors.Is(err, redis.Nil) || err == nil && status != string(workflow.StatusRunning) {
		return nil
	}
	if err != nil {
		return redisErr(err)
	}
	return redisErr(s.rdb.SAdd(ctx, key, entry).Err())
}

// unlistThenStatus removes entry from the running-set partition key and
// then reads the status in state: one pipeline on one node (a connection
// runs its commands in order), two requests in turn on a cluster, where
// the keys live on different nodes and a pipeline sends to each at once.
func (s *Store) unlistThenStatus(ctx context.Context, key, entry, state string) (string, error) {
	if s.cluster {
		if err := s.rdb.SRem(ctx, key, entry).Err(); err != nil {
			return "", err
		}
		return s.rdb.HGet(ctx, state, "status").Result()
	}
	pipe := s.rdb.Pipeline()
	srem := pipe.SRem(ctx, key, entry)
	status := pipe.HGet(ctx, state, "status")
	_, _ = pipe.Exec(ctx)
	if err := srem.Err(); err != nil {
		return "", err
	}
	return status.Result()
}
