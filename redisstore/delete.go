package redisstore

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/workflow"
)

// DeleteWorkflow reads the workflow's user, removes every key of the
// workflow and its entry in the user's running set in one script, then its
// entries in the user's listing, the global listing, the running set and
// the trace index (other slots, so separate commands in one pipeline).
// KindNotFound when it does not exist. Should the index cleanup fail, the
// delete still succeeds: the entries left behind point to a workflow that
// is gone, which readers skip.
func (s *Store) DeleteWorkflow(ctx context.Context, id string) (err error) {
	defer workflow.Wrap(&err, "redisstore.DeleteWorkflow(%q)", id)
	if err := checkWorkflowID(ctx, id, false); err != nil {
		return err
	}
	user, err := s.rdb.HGet(ctx, s.keys.workflow(id).state, "user").Result()
	if err != nil {
		if errors.Is(err, redis.Nil) {
			return workflow.Errorf(workflow.KindNotFound, "workflow %s not found", id)
		}
		return redisErr(err)
	}
	keys := append(s.keys.workflow(id).all(), s.keys.runningFor(user))
	reply, err := s.evalPipelined(ctx, nil, deleteScript, keys, id, user)
	if err != nil {
		return err
	}
	switch reply[0] {
	case "missing":
		return workflow.Errorf(workflow.KindNotFound, "workflow %s not found", id)
	case "user": // a user never changes: the store is corrupt
		return workflow.Errorf(workflow.KindInternal, "workflow %s changed its user during the delete", id)
	}
	rest, err := replyStrings(reply, 1)
	if err != nil || len(rest) == 0 {
		return workflow.WrapKind(workflow.KindInternal, err, "delete script replied %v", reply)
	}
	user, traceIDs := rest[0], rest[1:]
	pipe := s.rdb.Pipeline()
	pipe.ZRem(ctx, s.keys.user(user), id)
	pipe.ZRem(ctx, s.keys.listing(), id)
	pipe.SRem(ctx, s.keys.running(), id)
	pipe.SRem(ctx, s.keys.runningFor(user), id)
	for _, t := range traceIDs {
		pipe.Del(ctx, s.keys.trace(t)) // one DEL per key: they are in different slots
	}
	// The delete is applied: entries a failed cleanup leaves behind point
	// to a workflow that is gone, which readers skip, so it is not an error.
	_, _ = pipe.Exec(ctx)
	return nil
}
