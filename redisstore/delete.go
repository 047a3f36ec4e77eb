package redisstore

import (
	"context"

	"github.com/twostep/twostep/workflow"
)

// DeleteWorkflow removes every key of the workflow in one script, then its
// entries in the user's listing, the global listing, the running sets and
// the trace index (other slots, so separate commands in one pipeline).
// KindNotFound when it does not exist. Should the index cleanup fail, the
// delete still succeeds: the entries left behind point to a workflow that
// is gone, which readers skip.
func (s *Store) DeleteWorkflow(ctx context.Context, id string) (err error) {
	defer workflow.Wrap(&err, "redisstore.DeleteWorkflow(%q)", id)
	if err := checkWorkflowID(ctx, id, false); err != nil {
		return err
	}
	reply, err := s.evalPipelined(ctx, nil, deleteScript, s.keys.workflow(id).all())
	if err != nil {
		return err
	}
	if reply[0] == "missing" {
		return workflow.Errorf(workflow.KindNotFound, "workflow %s not found", id)
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
