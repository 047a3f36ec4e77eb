package redisstore

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/workflow"
)

var _ workflow.StandingStore = (*Store)(nil)

// Standing approvals live in the slot of their user (hash tag {u:<user>}),
// so every script below touches one slot and works on a cluster:
//
//	<user base>:standing        hash id -> the approval's JSON (Uses 0)
//	<user base>:standing:uses   hash id -> the calls it let run (HINCRBY)

func (u userKeys) standing() string     { return u.base + ":standing" }
func (u userKeys) standingUses() string { return u.base + ":standing:uses" }

// putStandingScript adds a standing approval while the user keeps fewer
// than ARGV[3], and returns 1, or 0 when the user is at the limit.
//
//	KEYS: standing
//	ARGV: id json max
var putStandingScript = redis.NewScript(`
if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
`)

// deleteStandingScript removes a standing approval and its use count, and
// returns 1, or 0 when the user has none by that id.
//
//	KEYS: standing uses
//	ARGV: id
var deleteStandingScript = redis.NewScript(`
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HDEL', KEYS[2], ARGV[1])
return 1
`)

// useStandingScript counts one use of a standing approval that still
// exists and returns the count, or -1 when it was revoked.
//
//	KEYS: standing uses
//	ARGV: id
var useStandingScript = redis.NewScript(`
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return -1 end
return redis.call('HINCRBY', KEYS[2], ARGV[1], 1)
`)

// PutStanding stores a new standing approval under its user (after
// dropping the user's expired ones); KindInvalid at
// workflow.MaxStandingApprovals live ones.
func (s *Store) PutStanding(ctx context.Context, a workflow.StandingApproval) (err error) {
	defer workflow.Wrap(&err, "redisstore.PutStanding")
	if _, err := s.ListStanding(ctx, a.UserID, a.GrantedAt); err != nil {
		return err
	}
	a.Uses = 0
	raw, err := encodeRecord(standingRecord{layout, &a}, "standing approval", a.ID)
	if err != nil {
		return err
	}
	u := s.keys.user(a.UserID)
	ok, err := putStandingScript.Run(ctx, s.rdb, []string{u.standing()}, a.ID, raw, workflow.MaxStandingApprovals).Int()
	if err != nil {
		return redisErr(err)
	}
	if ok == 0 {
		return workflow.Errorf(workflow.KindInvalid, "user %s keeps %d standing approvals already: revoke some first", a.UserID, workflow.MaxStandingApprovals)
	}
	return nil
}

// ListStanding returns userID's live standing approvals at now with their
// uses, oldest first (one pipeline of two reads in the user's slot); the
// expired ones are removed.
func (s *Store) ListStanding(ctx context.Context, userID string, now time.Time) (_ []workflow.StandingApproval, err error) {
	defer workflow.Wrap(&err, "redisstore.ListStanding")
	u := s.keys.user(userID)
	pipe := s.rdb.Pipeline()
	all := pipe.HGetAll(ctx, u.standing())
	uses := pipe.HGetAll(ctx, u.standingUses())
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, redisErr(err)
	}
	out := []workflow.StandingApproval{}
	var expired []string
	for id, raw := range all.Val() {
		var a workflow.StandingApproval
		rec := standingRecord{StandingApproval: &a}
		if err := decodeRecord([]byte(raw), &rec, &rec.Layout, "standing approval "+id); err != nil {
			return nil, err
		}
		if !a.Live(now) {
			expired = append(expired, id)
			continue
		}
		a.Uses, _ = strconv.ParseInt(uses.Val()[id], 10, 64)
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b workflow.StandingApproval) int {
		return cmp.Or(a.GrantedAt.Compare(b.GrantedAt), cmp.Compare(a.ID, b.ID))
	})
	for _, id := range expired {
		// Best effort: an expired one is never used, and dropped again next time.
		_ = deleteStandingScript.Run(ctx, s.rdb, []string{u.standing(), u.standingUses()}, id).Err()
	}
	return out, nil
}

// DeleteStanding removes userID's standing approval id and its use count.
func (s *Store) DeleteStanding(ctx context.Context, userID, id string) (err error) {
	defer workflow.Wrap(&err, "redisstore.DeleteStanding")
	u := s.keys.user(userID)
	n, err := deleteStandingScript.Run(ctx, s.rdb, []string{u.standing(), u.standingUses()}, id).Int()
	if err != nil {
		return redisErr(err)
	}
	if n == 0 {
		return workflow.Errorf(workflow.KindNotFound, "standing approval %s not found", id)
	}
	return nil
}

// UseStanding counts one use of userID's standing approval id atomically
// (HINCRBY in a script that first checks it was not revoked).
func (s *Store) UseStanding(ctx context.Context, userID, id string) (_ int64, err error) {
	defer workflow.Wrap(&err, "redisstore.UseStanding")
	u := s.keys.user(userID)
	n, err := useStandingScript.Run(ctx, s.rdb, []string{u.standing(), u.standingUses()}, id).Int64()
	if err != nil {
		return 0, redisErr(err)
	}
	if n < 0 {
		return 0, workflow.Errorf(workflow.KindNotFound, "standing approval %s not found (revoked)", id)
	}
	return n, nil
}
