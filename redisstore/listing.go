package redisstore

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/workflow"
)

// ListWorkflows returns userID's workflows newest first (descending id,
// which for ids made by workflow.NewID is creation order) and the cursor of
// the next page. Index entries whose workflow is gone (deleted, expired) or
// belongs to someone else are skipped.
func (s *Store) ListWorkflows(ctx context.Context, userID string, p workflow.Page) (_ []*workflow.Workflow, _ string, err error) {
	defer workflow.Wrap(&err, "redisstore.ListWorkflows(%q)", userID)
	if err := checkID(ctx, "user id", userID); err != nil {
		return nil, "", err
	}
	return s.list(ctx, s.keys.user(userID), userID, p)
}

// ListAll returns every user's workflows newest first, with the order and
// cursors of ListWorkflows, for administrators. It reads the global listing
// (one sorted set for the whole store), a page at a time: its cost follows
// the page size, not the number of users or workflows. Entries whose
// workflow is gone (deleted, expired) are skipped.
func (s *Store) ListAll(ctx context.Context, p workflow.Page) (_ []*workflow.Workflow, _ string, err error) {
	defer workflow.Wrap(&err, "redisstore.ListAll")
	if err := ctx.Err(); err != nil {
		return nil, "", err
	}
	return s.list(ctx, s.keys.listing(), "", p)
}

// list returns the page p of the listing sorted set at key, in descending
// lex order of workflow id, keeping only workflows that exist and — when
// userID is set — belong to userID.
func (s *Store) list(ctx context.Context, key, userID string, p workflow.Page) ([]*workflow.Workflow, string, error) {
	after, err := workflow.DecodeCursor(p.Cursor)
	if err != nil {
		return nil, "", err
	}
	limit := p.Size()
	var out []*workflow.Workflow
	for {
		// Ask for one more than the page still needs, to learn whether a
		// next page exists.
		want := limit + 1 - len(out)
		upper := "+"
		if after != "" {
			upper = "(" + after
		}
		ids, err := s.rdb.ZRevRangeByLex(ctx, key, &redis.ZRangeBy{
			Max: upper, Min: "-", Count: int64(want),
		}).Result()
		if err != nil {
			return nil, "", redisErr(err)
		}
		found, err := s.listedWorkflows(ctx, userID, ids)
		if err != nil {
			return nil, "", err
		}
		out = append(out, found...)
		if len(out) > limit {
			out = out[:limit]
			return out, workflow.EncodeCursor(out[limit-1].ID), nil
		}
		if len(ids) < want {
			return out, "", nil
		}
		after = ids[len(ids)-1]
	}
}

// listedWorkflows reads the workflows ids name, in order, in one pipeline,
// keeping those that exist and, when userID is set, belong to userID.
func (s *Store) listedWorkflows(ctx context.Context, userID string, ids []string) ([]*workflow.Workflow, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.SliceCmd, len(ids))
	for i, id := range ids {
		cmds[i] = pipe.HMGet(ctx, s.keys.workflow(id).state, "user", "json")
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, redisErr(err)
	}
	var out []*workflow.Workflow
	for _, cmd := range cmds {
		vals := cmd.Val()
		user, _ := vals[0].(string)
		data, _ := vals[1].(string)
		if data == "" || (userID != "" && user != userID) {
			continue
		}
		wf, err := decodeWorkflow([]byte(data))
		if err != nil {
			return nil, err
		}
		out = append(out, wf)
	}
	return out, nil
}
