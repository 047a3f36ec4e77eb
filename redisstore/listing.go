package redisstore

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/workflow"
)

// ListWorkflows returns userID's workflows newest first (descending id,
// which for ids made by workflow.NewID is creation order) and the cursor of
// the next page. It reads the user's listing and the workflows' states,
// all in the user's slot. Index entries whose workflow is gone (deleted,
// expired) are skipped.
func (s *Store) ListWorkflows(ctx context.Context, userID string, p workflow.Page) (_ []*workflow.Workflow, _ string, err error) {
	defer workflow.Wrap(&err, "redisstore.ListWorkflows(%q)", userID)
	if err := checkID(ctx, "user id", userID); err != nil {
		return nil, "", err
	}
	key := s.keys.user(userID).listing
	unlist := func(p redis.Pipeliner, e listed) { p.ZRem(ctx, key, e.id) }
	return s.list(ctx, p, unlist, func(upper string, count int) ([]listed, error) {
		ids, err := s.rdb.ZRevRangeByLex(ctx, key, &redis.ZRangeBy{Max: upper, Min: "-", Count: int64(count)}).Result()
		if err != nil {
			return nil, redisErr(err)
		}
		out := make([]listed, len(ids))
		for i, id := range ids {
			out[i] = listed{id: id, user: userID}
		}
		return out, nil
	})
}

// ListAll returns every user's workflows newest first, with the order and
// cursors of ListWorkflows, for administrators. A page reads the same
// range of every partition of the admin listing (one pipeline, which on a
// cluster reaches every shard holding one), merges them by id and reads
// the page's states (one more pipeline): its cost follows the page size,
// not the number of users or workflows. A cursor is the last id listed,
// so it stays exact across partitions and shards. Entries whose workflow
// is gone (deleted, expired) are skipped.
func (s *Store) ListAll(ctx context.Context, p workflow.Page) (_ []*workflow.Workflow, _ string, err error) {
	defer workflow.Wrap(&err, "redisstore.ListAll")
	if err := ctx.Err(); err != nil {
		return nil, "", err
	}
	unlist := func(p redis.Pipeliner, e listed) { p.ZRem(ctx, s.keys.listingPart(partition(e.id)), ref(e.id, e.user)) }
	return s.list(ctx, p, unlist, func(upper string, count int) ([]listed, error) {
		pipe := s.rdb.Pipeline()
		cmds := make([]*redis.StringSliceCmd, partitions)
		for i := range cmds {
			cmds[i] = pipe.ZRevRangeByLex(ctx, s.keys.listingPart(i), &redis.ZRangeBy{Max: upper, Min: "-", Count: int64(count)})
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return nil, redisErr(err)
		}
		var refs []string
		for _, cmd := range cmds {
			refs = append(refs, cmd.Val()...)
		}
		// A ref sorts as its id does: newest first is descending refs.
		slices.SortFunc(refs, func(a, b string) int { return strings.Compare(b, a) })
		out := make([]listed, 0, min(len(refs), count))
		for _, r := range refs {
			if len(out) == count {
				break
			}
			if id, user, ok := parseRef(r); ok {
				out = append(out, listed{id: id, user: user})
			}
		}
		return out, nil
	})
}

// listed is one listing entry: a workflow id and the user whose slot
// holds it.
type listed struct{ id, user string }

// list returns the page p of a listing, in descending lex order of
// workflow id, keeping only workflows that exist and belong to the entry's
// user. rangeFn returns up to count entries with ids below upper (a
// ZRANGEBYLEX bound), newest first; unlist queues the removal of an entry
// whose workflow is gone for good (see prune).
func (s *Store) list(ctx context.Context, p workflow.Page, unlist func(redis.Pipeliner, listed), rangeFn func(upper string, count int) ([]listed, error)) ([]*workflow.Workflow, string, error) {
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
		entries, err := rangeFn(upper, want)
		if err != nil {
			return nil, "", err
		}
		found, gone, err := s.listedWorkflows(ctx, entries)
		if err != nil {
			return nil, "", err
		}
		s.prune(ctx, gone, unlist)
		out = append(out, found...)
		if len(out) > limit {
			out = out[:limit]
			return out, workflow.EncodeCursor(out[limit-1].ID), nil
		}
		if len(entries) < want {
			return out, "", nil
		}
		after = entries[len(entries)-1].id
	}
}

// listedWorkflows reads the workflows entries name, in order, in one
// pipeline, keeping those that exist and belong to the entry's user; gone
// are the entries whose workflow is not stored in that user's slot.
func (s *Store) listedWorkflows(ctx context.Context, entries []listed) (found []*workflow.Workflow, gone []listed, err error) {
	if len(entries) == 0 {
		return nil, nil, nil
	}
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.SliceCmd, len(entries))
	for i, e := range entries {
		cmds[i] = pipe.HMGet(ctx, s.keys.user(e.user).workflow(e.id).state, "user", "json")
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, nil, redisErr(err)
	}
	for i, cmd := range cmds {
		vals := cmd.Val()
		user, _ := vals[0].(string)
		data, _ := vals[1].(string)
		if data == "" {
			gone = append(gone, entries[i])
			continue
		}
		if user != entries[i].user {
			continue
		}
		wf, err := decodeState([]byte(data))
		if err != nil {
			return nil, nil, err
		}
		found = append(found, wf)
	}
	return found, gone, nil
}

// prune removes index entries whose workflow is gone for good: its state
// is missing in the entry's user's slot and the id's owner key is gone or
// names another user (a create claims the id before it writes any entry,
// a delete removes the owner key after the workflow, and retention
// expires both together).
// Entries of a workflow expired by retention would otherwise stay in
// listings and running sets that later commits keep alive. Best effort:
// one pipeline of GETs, and one of removals when there are any.
func (s *Store) prune(ctx context.Context, gone []listed, unlist func(redis.Pipeliner, listed)) {
	if len(gone) == 0 {
		return
	}
	pipe := s.rdb.Pipeline()
	owners := make([]*redis.StringCmd, len(gone))
	for i, e := range gone {
		owners[i] = pipe.Get(ctx, s.keys.owner(e.id))
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return
	}
	pipe = s.rdb.Pipeline()
	n := 0
	for i, e := range gone {
		if owner, err := owners[i].Result(); errors.Is(err, redis.Nil) || (err == nil && owner != e.user) {
			unlist(pipe, e)
			n++
		}
	}
	if n > 0 {
		_, _ = pipe.Exec(ctx)
	}
}
