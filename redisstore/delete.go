package redisstore

import (
	"context"

	"github.com/twostep/twostep/workflow"
)

// DeleteWorkflow removes every key of the workflow and its entries in its
// user's listing and running set in one script, in the user's slot; then
// its owner key, its entries in the store-wide listing, running set and
// approval index and its trace index entries (other slots, so separate
// commands in one pipeline, with queued entries of traces dropped past
// the cap).
// KindNotFound when it does not exist. Should that cleanup
// fail, the delete still succeeds: the entries left behind point to a
// workflow that is gone, which readers skip.
func (s *Store) DeleteWorkflow(ctx context.Context, id string) (err error) {
	defer workflow.Wrap(&err, "redisstore.DeleteWorkflow(%q)", id)
	if err := checkWorkflowID(ctx, id, false); err != nil {
		return err
	}
	var (
		reply []any
		user  string
	)
	found, err := s.inSlot(ctx, id, func(userID string) (bool, error) {
		uk := s.keys.user(userID)
		keys := append(uk.workflow(id).all(), uk.running, uk.listing)
		var err error
		reply, err = s.evalDurable(ctx, nil, deleteScript, scriptCall(deleteScript, keys, id))
		if err != nil {
			return false, err
		}
		user = userID
		return reply[0] != "missing", nil
	})
	if err != nil {
		return err
	}
	if !found {
		return workflow.Errorf(workflow.KindNotFound, "workflow %s not found", id)
	}
	if reply[0] != "ok" {
		return workflow.Errorf(workflow.KindInternal, "delete script replied %v", reply)
	}
	traceIDs, err := replyStrings(reply, 1)
	if err != nil {
		return workflow.WrapKind(workflow.KindInternal, err, "delete script replied %v", reply)
	}
	s.owners.forget(id)
	s.index.deleted(id, s.keys.owner(id))
	s.calls.forget(id)
	entry, part := ref(id, user), partition(id)
	pipe := s.rdb.Pipeline()
	pipe.Del(ctx, s.keys.owner(id))
	pipe.Del(ctx, s.keys.user(user).wfPrefix+id+":webhook")
	pipe.ZRem(ctx, s.keys.listingPart(part), entry)
	pipe.SRem(ctx, s.keys.runningPart(part), entry)
	pipe.ZRem(ctx, s.keys.approvalsPart(part), entry)
	for _, t := range traceIDs {
		pipe.Del(ctx, s.keys.trace(t)) // one DEL per key: they are in different slots
	}
	drops := s.takeDrops()
	drops.queue(ctx, pipe)
	// The delete is applied: entries a failed cleanup leaves behind point
	// to a workflow that is gone, which readers skip, so it is not an error.
	_, _ = pipe.Exec(ctx)
	drops.requeue()
	return nil
}
