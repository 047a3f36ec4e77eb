package redisstore

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/workflow"
)

// AppendTrace stores t with its workflow (KindNotFound when the workflow
// does not exist, KindConflict when the trace id does) and drops the oldest
// traces beyond TraceCap. The trace index entry is written in the same
// pipeline, before the script, so a stored trace is always findable by id.
func (s *Store) AppendTrace(ctx context.Context, t workflow.Trace) (err error) {
	defer workflow.Wrap(&err, "redisstore.AppendTrace(%q)", t.ID)
	if err := checkID(ctx, "trace id", t.ID); err != nil {
		return err
	}
	if err := checkWorkflowID(ctx, t.WorkflowID, true); err != nil {
		return err
	}
	data, err := encodeTrace(&t)
	if err != nil {
		return err
	}
	var reply []any
	found, err := s.inSlot(ctx, t.WorkflowID, func(userID string) (bool, error) {
		k := s.keys.user(userID).workflow(t.WorkflowID)
		var err error
		reply, err = s.evalPipelined(ctx, func(p redis.Pipeliner) {
			p.Set(ctx, s.keys.trace(t.ID), ref(t.WorkflowID, userID), s.opts.Retention)
		}, appendTraceScript, scriptCall(appendTraceScript, []string{k.state, k.traces, k.tracedata}, t.ID, data, s.opts.TraceCap))
		if err != nil {
			return false, err
		}
		return reply[0] != "missing", nil
	})
	if err != nil {
		return err
	}
	if !found {
		reply = []any{"missing"}
	}
	var drop []string
	switch reply[0] {
	case "ok":
		if drop, err = replyStrings(reply, 1); err != nil {
			return err
		}
	case "missing":
		drop = []string{t.ID}
		err = workflow.Errorf(workflow.KindNotFound, "workflow %s not found", t.WorkflowID)
	case "exists":
		return workflow.Errorf(workflow.KindConflict, "trace %s already exists", t.ID)
	default:
		return workflow.Errorf(workflow.KindInternal, "trace script replied %v", reply)
	}
	if len(drop) > 0 {
		if perr := s.dropTraceEntries(ctx, drop); perr != nil && err == nil {
			err = workflow.WrapKind(workflow.KindUnavailable, perr, "dropped traces keep their index entries")
		}
	}
	return err
}

// dropTraceEntries deletes the index entries of the traces ids, in one
// pipeline.
func (s *Store) dropTraceEntries(ctx context.Context, ids []string) error {
	pipe := s.rdb.Pipeline()
	for _, id := range ids {
		pipe.Del(ctx, s.keys.trace(id))
	}
	_, err := pipe.Exec(ctx)
	return redisErr(err)
}

// Traces returns the workflow's kept traces, oldest first; KindNotFound for
// an unknown workflow.
func (s *Store) Traces(ctx context.Context, workflowID string) (_ []workflow.Trace, err error) {
	defer workflow.Wrap(&err, "redisstore.Traces(%q)", workflowID)
	if err := checkWorkflowID(ctx, workflowID, false); err != nil {
		return nil, err
	}
	var raw []string
	found, err := s.inSlot(ctx, workflowID, func(userID string) (bool, error) {
		k := s.keys.user(userID).workflow(workflowID)
		var err error
		raw, err = tracesScript.Run(ctx, s.rdb, []string{k.state, k.traces, k.tracedata}).StringSlice()
		if errors.Is(err, redis.Nil) {
			return false, nil
		}
		return err == nil, redisErr(err)
	})
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, workflow.Errorf(workflow.KindNotFound, "workflow %s not found", workflowID)
	}
	out := make([]workflow.Trace, len(raw))
	for i, r := range raw {
		if err := decodeTrace([]byte(r), &out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// GetTrace returns one kept trace by id; KindNotFound when it is unknown,
// was dropped by the cap, or its workflow is gone.
func (s *Store) GetTrace(ctx context.Context, traceID string) (_ workflow.Trace, err error) {
	defer workflow.Wrap(&err, "redisstore.GetTrace(%q)", traceID)
	if err := checkID(ctx, "trace id", traceID); err != nil {
		return workflow.Trace{}, err
	}
	notFound := workflow.Errorf(workflow.KindNotFound, "trace %s not found", traceID)
	entry, err := s.rdb.Get(ctx, s.keys.trace(traceID)).Result()
	if errors.Is(err, redis.Nil) {
		return workflow.Trace{}, notFound
	}
	if err != nil {
		return workflow.Trace{}, redisErr(err)
	}
	wfID, userID, ok := parseRef(entry)
	if !ok || checkWorkflowID(ctx, wfID, false) != nil {
		return workflow.Trace{}, notFound
	}
	b, err := s.rdb.HGet(ctx, s.keys.user(userID).workflow(wfID).tracedata, traceID).Bytes()
	if errors.Is(err, redis.Nil) {
		return workflow.Trace{}, notFound
	}
	if err != nil {
		return workflow.Trace{}, redisErr(err)
	}
	var t workflow.Trace
	if err := decodeTrace(b, &t); err != nil {
		return workflow.Trace{}, err
	}
	return t, nil
}
