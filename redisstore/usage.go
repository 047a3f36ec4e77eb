package redisstore

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/workflow"
)

var _ workflow.UsageStore = (*Store)(nil)

// A user's usage counter of one period is a hash in the user's slot,
// <user base>:usage:<period>, fields t (settled tokens), m (settled
// micro-dollars), s (1 once spent), r (tokens of live holds) and h:<id>
// (one hold's tokens), with the holds' deadlines in a sorted set beside
// it, <counter>:holds (member id, score the deadline in Unix ms); both
// expire ttl after their last change. Each change is one script on the
// two keys of one slot, so a check and its reservation are one atomic step
// on a node or a cluster, and every script first drops the expired holds.

// usageSweep is the scripts' common start: it drops the holds whose
// deadline is at or before ARGV[n] (now, Unix ms).
const usageSweep = `
local function sweep(now)
  local gone = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)
  if #gone == 0 then return end
  local r = tonumber(redis.call('HGET', KEYS[1], 'r') or '0')
  for _, id in ipairs(gone) do
    r = r - tonumber(redis.call('HGET', KEYS[1], 'h:' .. id) or '0')
    redis.call('HDEL', KEYS[1], 'h:' .. id)
  end
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
  redis.call('HSET', KEYS[1], 'r', math.max(r, 0))
end
local function touch(ttl)
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('PEXPIRE', KEYS[2], ttl)
end
`

// reserveUsageScript records a hold while the settled usage and the live
// holds leave room under the limit (the hold itself may cross it); it
// marks the counter spent when the settled usage alone leaves none.
//
//	KEYS: counter holds
//	ARGV: id tokens deadlineMs nowMs limitTokens limitMicros ttlMs
//	reply: {granted, tokens, micros, reserved, spent}
var reserveUsageScript = redis.NewScript(usageSweep + `
sweep(ARGV[4])
local cur = redis.call('HMGET', KEYS[1], 't', 'm', 'r', 's')
local t, m = tonumber(cur[1] or '0'), tonumber(cur[2] or '0')
local r, s = tonumber(cur[3] or '0'), tonumber(cur[4] or '0')
local add = tonumber(ARGV[2])
local lt, lm = tonumber(ARGV[5]), tonumber(ARGV[6])
local granted = 0
if (lt > 0 and t >= lt) or (lm > 0 and m > lm) then
  s = 1
  redis.call('HSET', KEYS[1], 's', 1)
elseif not (lt > 0 and t + r >= lt) then
  local field = 'h:' .. ARGV[1]
  r = r - tonumber(redis.call('HGET', KEYS[1], field) or '0') + add
  redis.call('HSET', KEYS[1], 'r', r, field, add)
  redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
  granted = 1
end
if redis.call('EXISTS', KEYS[1]) == 1 then touch(ARGV[7]) end
return {granted, t, m, r, s}
`)

// settleUsageScript drops a hold and adds to the settled usage (never
// below zero).
//
//	KEYS: counter holds
//	ARGV: id ('' for none) addTokens addMicros nowMs ttlMs
//	reply: {tokens, micros, reserved, spent}
var settleUsageScript = redis.NewScript(usageSweep + `
sweep(ARGV[4])
if ARGV[1] ~= '' and redis.call('ZREM', KEYS[2], ARGV[1]) == 1 then
  local field = 'h:' .. ARGV[1]
  local r = tonumber(redis.call('HGET', KEYS[1], 'r') or '0') - tonumber(redis.call('HGET', KEYS[1], field) or '0')
  redis.call('HDEL', KEYS[1], field)
  redis.call('HSET', KEYS[1], 'r', math.max(r, 0))
end
local cur = redis.call('HMGET', KEYS[1], 't', 'm', 'r', 's')
local t = math.max(tonumber(cur[1] or '0') + tonumber(ARGV[2]), 0)
local m = math.max(tonumber(cur[2] or '0') + tonumber(ARGV[3]), 0)
if ARGV[2] ~= '0' or ARGV[3] ~= '0' or redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('HSET', KEYS[1], 't', t, 'm', m)
  touch(ARGV[5])
end
return {t, m, tonumber(cur[3] or '0'), tonumber(cur[4] or '0')}
`)

// usageKeys are a counter's two keys: the hash and its holds.
func (s *Store) usageKeys(userID, period string) []string {
	k := s.keys.user(userID).base + ":usage:" + period
	return []string{k, k + ":holds"}
}

// ReserveUsage checks and records in one script.
func (s *Store) ReserveUsage(ctx context.Context, userID, period string, hold workflow.UsageHold, limit workflow.Usage, ttl time.Duration) (_ workflow.Usage, _ bool, err error) {
	defer workflow.Wrap(&err, "redisstore.ReserveUsage(%q)", userID)
	if err := checkID(ctx, "user id", userID); err != nil {
		return workflow.Usage{}, false, err
	}
	reply, err := reserveUsageScript.Run(ctx, s.rdb, s.usageKeys(userID, period),
		hold.ID, hold.Tokens, hold.Expires.UnixMilli(), hold.Now.UnixMilli(),
		limit.Tokens, limit.Micros, max(ttl.Milliseconds(), 1)).Int64Slice()
	if err != nil {
		return workflow.Usage{}, false, redisErr(err)
	}
	if len(reply) != 5 {
		return workflow.Usage{}, false, workflow.Errorf(workflow.KindInternal, "usage script replied %v", reply)
	}
	return workflow.Usage{Tokens: reply[1], Micros: reply[2], Reserved: reply[3], Spent: reply[4] == 1}, reply[0] == 1, nil
}

// AddUsage settles in one script.
func (s *Store) AddUsage(ctx context.Context, userID, period, holdID string, used workflow.Usage, now time.Time, ttl time.Duration) (_ workflow.Usage, err error) {
	defer workflow.Wrap(&err, "redisstore.AddUsage(%q)", userID)
	if err := checkID(ctx, "user id", userID); err != nil {
		return workflow.Usage{}, err
	}
	reply, err := settleUsageScript.Run(ctx, s.rdb, s.usageKeys(userID, period),
		holdID, used.Tokens, used.Micros, now.UnixMilli(), max(ttl.Milliseconds(), 1)).Int64Slice()
	if err != nil {
		return workflow.Usage{}, redisErr(err)
	}
	if len(reply) != 4 {
		return workflow.Usage{}, workflow.Errorf(workflow.KindInternal, "usage script replied %v", reply)
	}
	return workflow.Usage{Tokens: reply[0], Micros: reply[1], Reserved: reply[2], Spent: reply[3] == 1}, nil
}
