package redisstore

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/workflow"
)

var _ workflow.UsageStore = (*Store)(nil)

// A user's usage counter of one period is a hash in the user's slot,
// <user base>:usage:<period>, fields t (tokens), m (micro-dollars) and s (1 once spent),
// expiring ttl after its last change. Each change is one script on the one
// key, so a check and its reservation are one atomic step on a node or a
// cluster.

// reserveUsageScript adds to a counter unless that passes a limit.
//
//	KEYS: counter
//	ARGV: addTokens addMicros limitTokens limitMicros ttlMs
//	reply: {1, tokens, micros, spent} (added) | {0, tokens, micros, 1}
//	       (refused, and marked spent)
var reserveUsageScript = redis.NewScript(`
local cur = redis.call('HMGET', KEYS[1], 't', 'm', 's')
local t0, m0 = tonumber(cur[1] or '0'), tonumber(cur[2] or '0')
local t, m = t0 + tonumber(ARGV[1]), m0 + tonumber(ARGV[2])
local lt, lm = tonumber(ARGV[3]), tonumber(ARGV[4])
if (lt > 0 and t > lt) or (lm > 0 and m > lm) then
  redis.call('HSET', KEYS[1], 't', t0, 'm', m0, 's', 1)
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
  return {0, t0, m0, 1}
end
redis.call('HSET', KEYS[1], 't', t, 'm', m)
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return {1, t, m, tonumber(cur[3] or '0')}
`)

// addUsageScript adds to a counter (never below zero).
//
//	KEYS: counter
//	ARGV: addTokens addMicros ttlMs
//	reply: {tokens, micros, spent}
var addUsageScript = redis.NewScript(`
local cur = redis.call('HMGET', KEYS[1], 't', 'm', 's')
local t = math.max(tonumber(cur[1] or '0') + tonumber(ARGV[1]), 0)
local m = math.max(tonumber(cur[2] or '0') + tonumber(ARGV[2]), 0)
redis.call('HSET', KEYS[1], 't', t, 'm', m)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {t, m, tonumber(cur[3] or '0')}
`)

func (s *Store) usageKey(userID, period string) string {
	return s.keys.user(userID).base + ":usage:" + period
}

// ReserveUsage checks and adds in one script.
func (s *Store) ReserveUsage(ctx context.Context, userID, period string, add, limit workflow.Usage, ttl time.Duration) (_ workflow.Usage, _ bool, err error) {
	defer workflow.Wrap(&err, "redisstore.ReserveUsage(%q)", userID)
	if err := checkID(ctx, "user id", userID); err != nil {
		return workflow.Usage{}, false, err
	}
	reply, err := reserveUsageScript.Run(ctx, s.rdb, []string{s.usageKey(userID, period)},
		add.Tokens, add.Micros, limit.Tokens, limit.Micros, max(ttl.Milliseconds(), 1)).Int64Slice()
	if err != nil {
		return workflow.Usage{}, false, redisErr(err)
	}
	if len(reply) != 4 {
		return workflow.Usage{}, false, workflow.Errorf(workflow.KindInternal, "usage script replied %v", reply)
	}
	return workflow.Usage{Tokens: reply[1], Micros: reply[2], Spent: reply[3] == 1}, reply[0] == 1, nil
}

// AddUsage adds in one script.
func (s *Store) AddUsage(ctx context.Context, userID, period string, add workflow.Usage, ttl time.Duration) (_ workflow.Usage, err error) {
	defer workflow.Wrap(&err, "redisstore.AddUsage(%q)", userID)
	if err := checkID(ctx, "user id", userID); err != nil {
		return workflow.Usage{}, err
	}
	reply, err := addUsageScript.Run(ctx, s.rdb, []string{s.usageKey(userID, period)},
		add.Tokens, add.Micros, max(ttl.Milliseconds(), 1)).Int64Slice()
	if err != nil {
		return workflow.Usage{}, redisErr(err)
	}
	if len(reply) != 3 {
		return workflow.Usage{}, workflow.Errorf(workflow.KindInternal, "usage script replied %v", reply)
	}
	return workflow.Usage{Tokens: reply[0], Micros: reply[1], Spent: reply[2] == 1}, nil
}
