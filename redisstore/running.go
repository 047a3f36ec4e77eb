package redisstore

import (
	"context"

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
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return s.runningIn(ctx, s.keys.running(), "")
}

// RunningFor returns the ids of userID's workflows whose stored status is
// StatusRunning. It reads only userID's running set (one SMEMBERS) and
// checks those entries against their workflows' state (one pipeline), so
// its cost follows the user's running workflows, not everyone's. Stale
// entries are tolerated as in Running: an entry counts only when its
// workflow exists, is running and belongs to userID.
func (s *Store) RunningFor(ctx context.Context, userID string) (_ []string, err error) {
	defer workflow.Wrap(&err, "redisstore.RunningFor(%q)", userID)
	if err := checkID(ctx, "user id", userID); err != nil {
		return nil, err
	}
	return s.runningIn(ctx, s.keys.runningFor(userID), userID)
}

// runningIn returns the members of the running set at key whose workflow
// is stored with status running — and, when userID is set, belongs to
// userID.
func (s *Store) runningIn(ctx context.Context, key, userID string) ([]string, error) {
	ids, err := s.rdb.SMembers(ctx, key).Result()
	if err != nil {
		return nil, redisErr(err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.SliceCmd, len(ids))
	for i, id := range ids {
		cmds[i] = pipe.HMGet(ctx, s.keys.workflow(id).state, "status", "user")
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, redisErr(err)
	}
	var out []string
	for i, cmd := range cmds {
		vals := cmd.Val() // nil fields for a workflow that is gone
		status, _ := vals[0].(string)
		user, _ := vals[1].(string)
		if status == string(workflow.StatusRunning) && (userID == "" || user == userID) {
			out = append(out, ids[i])
		}
	}
	return out, nil
}

// unlistRunning removes id from the running set and from its user's running
// set, in one pipeline.
func (s *Store) unlistRunning(ctx context.Context, id, userID string) error {
	pipe := s.rdb.Pipeline()
	pipe.SRem(ctx, s.keys.running(), id)
	pipe.SRem(ctx, s.keys.runningFor(userID), id)
	_, err := pipe.Exec(ctx)
	return redisErr(err)
}
