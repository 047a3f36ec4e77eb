package redisstore

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/workflow"
)

// GetWorkflow returns the workflow, or KindNotFound.
func (s *Store) GetWorkflow(ctx context.Context, id string) (_ *workflow.Workflow, err error) {
	defer workflow.Wrap(&err, "redisstore.GetWorkflow(%q)", id)
	if err := checkWorkflowID(ctx, id, false); err != nil {
		return nil, err
	}
	var b []byte
	found, err := s.inSlot(ctx, id, func(userID string) (bool, error) {
		var err error
		b, err = s.rdb.HGet(ctx, s.keys.user(userID).workflow(id).state, "json").Bytes()
		if errors.Is(err, redis.Nil) {
			return false, nil
		}
		return err == nil, redisErr(err)
	})
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, workflow.Errorf(workflow.KindNotFound, "workflow %s not found", id)
	}
	return decodeState(b)
}

// Messages returns up to limit messages with seq > afterSeq in seq order
// (limit <= 0: all of them), read atomically with the workflow's existence;
// KindNotFound for an unknown workflow.
func (s *Store) Messages(ctx context.Context, workflowID string, afterSeq int64, limit int) (_ []workflow.Message, err error) {
	defer workflow.Wrap(&err, "redisstore.Messages(%q)", workflowID)
	if err := checkWorkflowID(ctx, workflowID, false); err != nil {
		return nil, err
	}
	start := max(afterSeq, 0)
	stop := int64(-1)
	if limit > 0 {
		stop = start + int64(limit) - 1
	}
	var rng *redis.StringSliceCmd
	found, err := s.inSlot(ctx, workflowID, func(userID string) (bool, error) {
		k := s.keys.user(userID).workflow(workflowID)
		pipe := s.rdb.TxPipeline()
		exists := pipe.Exists(ctx, k.state)
		rng = pipe.LRange(ctx, k.msgs, start, stop)
		if _, err := pipe.Exec(ctx); err != nil {
			return false, redisErr(err)
		}
		return exists.Val() != 0, nil
	})
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, workflow.Errorf(workflow.KindNotFound, "workflow %s not found", workflowID)
	}
	raw := rng.Val()
	out := make([]workflow.Message, len(raw))
	for i, r := range raw {
		if err := decodeMessage([]byte(r), start+int64(i)+1, &out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// DocumentContent returns a document of the workflow with its bytes (never
// nil: an empty document is stored as an empty hash field value and reads
// back as zero-length content); KindNotFound when the workflow does not own
// it.
func (s *Store) DocumentContent(ctx context.Context, workflowID, documentID string) (_ workflow.DocumentContent, err error) {
	defer workflow.Wrap(&err, "redisstore.DocumentContent(%q, %q)", workflowID, documentID)
	if err := checkWorkflowID(ctx, workflowID, false); err != nil {
		return workflow.DocumentContent{}, err
	}
	if err := checkID(ctx, "document id", documentID); err != nil {
		return workflow.DocumentContent{}, err
	}
	var meta, content *redis.StringCmd
	found, err := s.inSlot(ctx, workflowID, func(userID string) (bool, error) {
		k := s.keys.user(userID).workflow(workflowID)
		pipe := s.rdb.TxPipeline()
		exists := pipe.Exists(ctx, k.state)
		meta = pipe.HGet(ctx, k.docmeta, documentID)
		content = pipe.HGet(ctx, k.docs, documentID)
		if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
			return false, redisErr(err)
		}
		return exists.Val() != 0, nil
	})
	if err != nil {
		return workflow.DocumentContent{}, err
	}
	if !found || meta.Err() != nil || content.Err() != nil {
		return workflow.DocumentContent{}, workflow.Errorf(workflow.KindNotFound, "document %s not found in workflow %s", documentID, workflowID)
	}
	var dc workflow.DocumentContent
	if err := decodeDocument([]byte(meta.Val()), &dc.Document); err != nil {
		return workflow.DocumentContent{}, err
	}
	dc.Content = []byte(content.Val())
	return dc, nil
}
