package redisstore

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/workflow"
)

var _ workflow.ApprovalIndex = (*Store)(nil)

// The approval index: partition n (of the same 16 as the listing and the
// running set, hash tag {i<n>}) is the sorted set
//
//	twostep:{i<n>}:approvals   refs of workflows awaiting approval, scored by
//	                           the approval's expiresAt in Unix milliseconds
//
// Commit adds a workflow's ref (ZADD, in the pipeline before the script)
// when it stores the workflow awaiting approval, and takes it out (ZREM,
// after the script) when a commit moves it from awaiting approval to
// another status; DeleteWorkflow takes it out too. As with the running set,
// an entry may be stale (a commit that lost its version race, a ZREM that
// failed, a workflow gone by retention): DueApprovals checks each entry it
// reads against the workflow's status and removes the stale ones with
// removeIfScoreScript, which leaves an entry a later commit re-scored.

// approvalsIndexedKey marks the store's approval index as backfilled: set
// once BackfillApprovals has indexed every workflow stored before the
// index existed.
func (k keys) approvalsIndexed() string { return k.prefix + ":approvals:indexed" }

// approvalsPart names partition i of the approval index.
func (k keys) approvalsPart(i int) string { return k.prefix + ":{" + partTag(i) + "}:approvals" }

// removeIfScoreScript removes a member from a sorted set only while it has
// the score it was read with, so a removal decided on an old read never
// takes out the entry a concurrent commit wrote anew.
//
//	KEYS: sortedSet
//	ARGV: member score
var removeIfScoreScript = redis.NewScript(`
local cur = redis.call('ZSCORE', KEYS[1], ARGV[1])
if cur and tonumber(cur) == tonumber(ARGV[2]) then return redis.call('ZREM', KEYS[1], ARGV[1]) end
return 0
`)

// dueRef is one entry of the approval index read by DueApprovals.
type dueRef struct {
	id, user, member string
	part             int
	score            float64
}

// DueApprovals reads at most limit entries of the approval index after
// the place after whose expiresAt is at or before now, in order (score,
// then workflow id), and returns the ids of those whose workflow is stored
// awaiting approval and the place after the last entry read (zero when no
// entry due is left). Of each partition it reads, in one pipeline (which
// on a cluster reaches every shard holding one), at most limit entries
// scored past after and every entry scored the same as after (those that
// expire in the same millisecond, of which it keeps the ids past after's);
// then the status of each workflow read (one more pipeline); entries whose
// workflow no longer awaits approval, or is gone, are removed (one more,
// only when there are such entries). Its cost follows the entries due,
// never the store's size.
func (s *Store) DueApprovals(ctx context.Context, now time.Time, after workflow.DueCursor, limit int) (_ []string, _ workflow.DueCursor, err error) {
	defer workflow.Wrap(&err, "redisstore.DueApprovals")
	if err := ctx.Err(); err != nil {
		return nil, workflow.DueCursor{}, err
	}
	if limit <= 0 {
		return nil, workflow.DueCursor{}, nil
	}
	stop := strconv.FormatInt(now.UnixMilli(), 10)
	start, at := "-inf", ""
	if !after.IsZero() {
		at = strconv.FormatInt(after.ExpiresAt.UnixMilli(), 10)
		start = "(" + at
	}
	pipe := s.rdb.Pipeline()
	parts := make([]*redis.ZSliceCmd, partitions)
	same := make([]*redis.ZSliceCmd, partitions)
	for i := range parts {
		key := s.keys.approvalsPart(i)
		parts[i] = pipe.ZRangeArgsWithScores(ctx, redis.ZRangeArgs{Key: key, Start: start, Stop: stop, ByScore: true, Count: int64(limit)})
		if at != "" && after.ExpiresAt.UnixMilli() <= now.UnixMilli() {
			same[i] = pipe.ZRangeArgsWithScores(ctx, redis.ZRangeArgs{Key: key, Start: at, Stop: at, ByScore: true})
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, workflow.DueCursor{}, redisErr(err)
	}
	var due []dueRef
	add := func(i int, cmd *redis.ZSliceCmd, past string) {
		if cmd == nil {
			return
		}
		for _, z := range cmd.Val() {
			member, _ := z.Member.(string)
			if id, user, ok := parseRef(member); ok && id > past {
				due = append(due, dueRef{id: id, user: user, member: member, part: i, score: z.Score})
			}
		}
	}
	for i := range parts {
		add(i, parts[i], "")
		add(i, same[i], after.ID)
	}
	if len(due) == 0 {
		return nil, workflow.DueCursor{}, nil
	}
	slices.SortFunc(due, func(a, b dueRef) int { return cmp.Or(cmp.Compare(a.score, b.score), cmp.Compare(a.id, b.id)) })
	var next workflow.DueCursor
	if len(due) >= limit {
		// Full: more may be due, or not; the next call tells.
		due = due[:limit]
		last := due[limit-1]
		next = workflow.DueCursor{ExpiresAt: time.UnixMilli(int64(last.score)), ID: last.id}
	}
	ids, err := s.awaitingOf(ctx, due)
	return ids, next, err
}

// awaitingOf returns the ids of the entries of due whose workflow is stored
// awaiting approval, and removes the others from the index.
func (s *Store) awaitingOf(ctx context.Context, due []dueRef) ([]string, error) {
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.StringCmd, len(due))
	for i, d := range due {
		cmds[i] = pipe.HGet(ctx, s.keys.user(d.user).workflow(d.id).state, "status")
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, redisErr(err)
	}
	var ids []string
	var stale []dueRef
	for i, cmd := range cmds {
		if cmd.Val() == string(workflow.StatusAwaitingApproval) {
			ids = append(ids, due[i].id)
		} else if cmd.Err() == nil || errors.Is(cmd.Err(), redis.Nil) {
			stale = append(stale, due[i])
		}
	}
	if len(stale) > 0 {
		// Best effort: an entry left is checked again at the next call.
		rm := s.rdb.Pipeline()
		for _, d := range stale {
			// EVAL, not EVALSHA: a pipeline cannot fall back on NOSCRIPT.
			removeIfScoreScript.Eval(ctx, rm, []string{s.keys.approvalsPart(d.part)}, d.member, d.score)
		}
		_, _ = rm.Exec(ctx)
	}
	return ids, nil
}

// BackfillApprovals indexes the workflows stored awaiting approval before
// the store kept the approval index (ZADD NX: an entry a commit wrote
// stays), reading the admin listing once, and then marks the index as
// backfilled, so that every later call, on any instance, is one EXISTS.
func (s *Store) BackfillApprovals(ctx context.Context) (_ int, err error) {
	defer workflow.Wrap(&err, "redisstore.BackfillApprovals")
	marker := s.keys.approvalsIndexed()
	done, err := s.rdb.Exists(ctx, marker).Result()
	if err != nil || done == 1 {
		return 0, redisErr(err)
	}
	n, cursor := 0, ""
	for {
		page, next, err := s.ListAll(ctx, workflow.Page{Limit: workflow.MaxPageLimit, Cursor: cursor})
		if err != nil {
			return n, err
		}
		pipe := s.rdb.Pipeline()
		var adds []*redis.IntCmd
		for _, wf := range page {
			if wf.Status == workflow.StatusAwaitingApproval && wf.PendingApproval != nil {
				adds = append(adds, pipe.ZAddNX(ctx, s.keys.approvalsPart(partition(wf.ID)),
					redis.Z{Score: float64(wf.PendingApproval.ExpiresAt.UnixMilli()), Member: ref(wf.ID, wf.UserID)}))
			}
		}
		if len(adds) > 0 {
			if _, err := pipe.Exec(ctx); err != nil {
				return n, redisErr(err)
			}
			for _, c := range adds {
				n += int(c.Val())
			}
		}
		if next == "" {
			break
		}
		cursor = next
	}
	return n, redisErr(s.rdb.Set(ctx, marker, time.Now().UTC().Format(time.RFC3339), 0).Err())
}

// indexApproval queues on p the approval index entry of wf, stored
// awaiting approval, under its approval's expiresAt.
func (s *Store) indexApproval(ctx context.Context, p redis.Pipeliner, wf *workflow.Workflow, entry string) {
	p.ZAdd(ctx, s.keys.approvalsPart(partition(wf.ID)),
		redis.Z{Score: float64(wf.PendingApproval.ExpiresAt.UnixMilli()), Member: entry})
}

// unlistApproval removes workflow id's entry from the approval index.
func (s *Store) unlistApproval(ctx context.Context, id, userID string) error {
	return redisErr(s.rdb.ZRem(ctx, s.keys.approvalsPart(partition(id)), ref(id, userID)).Err())
}

// awaiting reports whether wf is stored awaiting a decision that the
// approval index holds.
func awaiting(wf *workflow.Workflow) bool {
	return wf.Status == workflow.StatusAwaitingApproval && wf.PendingApproval != nil
}
