package redisstore

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// The Lua scripts. Each one touches only the keys of one workflow (one hash
// tag), so it runs atomically on Redis Cluster too. Replies are arrays whose
// first element is a status word: "ok", or why nothing was written.

// commitScript applies a Commit.
//
//	KEYS: state msgs docs docmeta traces tracedata
//	ARGV: expectedVersion newVersion userId status stateJSON retentionMs nMsgs
//	      msgJSON×nMsgs (docId metaJSON content)×nDocs
//	reply: {"ok", seqBase, previousStatus} | {"exists"} | {"missing"} |
//	       {"stale", version} | {"user"} | {"docexists", docId}
var commitScript = redis.NewScript(`
local cur = redis.call('HMGET', KEYS[1], 'version', 'user', 'status')
if ARGV[1] == '0' then
  if cur[1] then return {'exists'} end
else
  if not cur[1] then return {'missing'} end
  if cur[1] ~= ARGV[1] then return {'stale', cur[1]} end
  if cur[2] ~= ARGV[3] then return {'user'} end
end
local nmsgs = tonumber(ARGV[7])
local first = 8 + nmsgs
for i = first, #ARGV, 3 do
  if redis.call('HEXISTS', KEYS[4], ARGV[i]) == 1 then return {'docexists', ARGV[i]} end
end
local base = redis.call('LLEN', KEYS[2])
for i = 8, first - 1 do redis.call('RPUSH', KEYS[2], ARGV[i]) end
for i = first, #ARGV, 3 do
  redis.call('HSET', KEYS[4], ARGV[i], ARGV[i + 1])
  redis.call('HSET', KEYS[3], ARGV[i], ARGV[i + 2])
end
redis.call('HSET', KEYS[1], 'version', ARGV[2], 'user', ARGV[3], 'status', ARGV[4], 'json', ARGV[5])
if ARGV[6] ~= '0' then
  for _, k in ipairs(KEYS) do redis.call('PEXPIRE', k, ARGV[6]) end
end
return {'ok', base, cur[3] or ''}
`)

// deleteScript removes every key of a workflow.
//
//	KEYS: state msgs docs docmeta traces tracedata lease
//	reply: {"ok", userId, traceId...} | {"missing"}
var deleteScript = redis.NewScript(`
local user = redis.call('HGET', KEYS[1], 'user')
if not user then return {'missing'} end
local out = {'ok', user}
for _, id in ipairs(redis.call('LRANGE', KEYS[5], 0, -1)) do out[#out + 1] = id end
redis.call('DEL', unpack(KEYS))
return out
`)

// appendTraceScript appends a trace and drops the oldest beyond the cap. The
// trace keys expire with the workflow's state.
//
//	KEYS: state traces tracedata
//	ARGV: traceId traceJSON cap
//	reply: {"ok", droppedTraceId...} | {"missing"} | {"exists"}
var appendTraceScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return {'missing'} end
if redis.call('HEXISTS', KEYS[3], ARGV[1]) == 1 then return {'exists'} end
redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
local n = redis.call('RPUSH', KEYS[2], ARGV[1])
local out = {'ok'}
local cap = tonumber(ARGV[3])
while n > cap do
  local old = redis.call('LPOP', KEYS[2])
  redis.call('HDEL', KEYS[3], old)
  out[#out + 1] = old
  n = n - 1
end
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[2], ttl)
  redis.call('PEXPIRE', KEYS[3], ttl)
end
return out
`)

// tracesScript reads a workflow's traces, oldest first.
//
//	KEYS: state traces tracedata
//	reply: nil when the workflow does not exist, else the trace JSONs
var tracesScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
local out = {}
for _, id in ipairs(redis.call('LRANGE', KEYS[2], 0, -1)) do
  local t = redis.call('HGET', KEYS[3], id)
  if t then out[#out + 1] = t end
end
return out
`)

// claimScript takes or renews a round lease.
//
//	KEYS: state lease
//	ARGV: owner ttlMs
//	reply: 1 claimed, 0 held by another owner, -1 no such workflow
var claimScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local cur = redis.call('GET', KEYS[2])
if cur and cur ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
return 1
`)

// releaseScript deletes a lease only when owner holds it.
//
//	KEYS: lease
//	ARGV: owner
var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`)

// evalPipelined sends the commands queue adds and then script, in one
// pipeline (one round trip). If Redis has not cached the script yet it is
// sent again with EVAL. The script's reply decides the outcome: a failed
// index command does not undo a script that ran.
func (s *Store) evalPipelined(ctx context.Context, queue func(redis.Pipeliner), script *redis.Script, keys []string, args ...any) ([]any, error) {
	pipe := s.rdb.Pipeline()
	if queue != nil {
		queue(pipe)
	}
	cmd := pipe.EvalSha(ctx, script.Hash(), keys, args...)
	_, _ = pipe.Exec(ctx)
	res, err := cmd.Result()
	if redis.HasErrorPrefix(err, "NOSCRIPT") {
		res, err = script.Eval(ctx, s.rdb, keys, args...).Result()
	}
	if err != nil {
		return nil, redisErr(err)
	}
	return replyArray(res)
}
