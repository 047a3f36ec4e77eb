package redisstore

import (
	"context"
	"slices"

	"github.com/redis/go-redis/v9"
)

// The Lua scripts. Each one touches only keys of one hash slot — the slot
// of the workflow's user, which holds the workflow's keys, the user's
// listing and the user's running set — so each runs atomically on a Redis
// Cluster as on a single node. Replies are arrays whose first element is a
// status word: "ok", or why nothing was written.

// commitScript applies a Commit.
//
// The user's running set (KEYS[7]) is kept here, with the status: a
// workflow is in it exactly while its stored status is running, so its
// size is the user's exact running count for the limit check. At the
// limit, entries whose workflow is no longer stored running (expired by
// retention while it ran) are dropped before the count is trusted: every
// workflow of the user is in this slot, so the script can look. A create
// also enters the workflow in the user's listing (KEYS[8]). The commit's
// traces are appended as appendTraceScript does, dropping the oldest
// beyond the cap; the reply lists the dropped ids after the previous
// status. Each Redis call costs the script more than its command takes,
// so the script makes as few as it can: a trace's data is written by the
// HSETNX that checks its id is new (the traces written before a duplicate
// are deleted again, so a refused commit still writes nothing), and the
// messages go in one RPUSH per thousand, whose reply gives the seq base
// (0 when there is no message).
//
// The commit's webhook deliveries enter the user's outbox (KEYS[9], the
// records, and KEYS[10], the due set) with it, so a delivery exists
// exactly when the commit that ends or pauses its round applied.
//
//	KEYS: state msgs docs docmeta traces tracedata userRunning userListing
//	      userHooks userHookDue
//	ARGV: expectedVersion newVersion userId status stateJSON retentionMs
//	      fence runningLimit workflowId wfKeyPrefix nMsgs nTraces traceCap
//	      msgJSON×nMsgs (traceId traceJSON)×nTraces (docId metaJSON content)×nDocs
//	      dropDocId×nDrops nDrops (hookId dueMs hookJSON)×nHooks nHooks
//	reply: {"ok", seqBase, previousStatus, droppedTraceId...} | {"exists"} |
//	       {"missing"} | {"stale", version} | {"user"} | {"docexists", docId} |
//	       {"traceexists", traceId} | {"fenced", fence} | {"toomany", running}
var commitScript = newScript(`
local cur = redis.call('HMGET', KEYS[1], 'version', 'user', 'status', 'fence')
if ARGV[1] == '0' then
  if cur[1] then return {'exists'} end
else
  if not cur[1] then return {'missing'} end
  if cur[1] ~= ARGV[1] then return {'stale', cur[1]} end
  if cur[2] ~= ARGV[3] then return {'user'} end
end
if ARGV[7] ~= '0' and (cur[4] or '0') ~= ARGV[7] then return {'fenced', cur[4] or '0'} end
local starts = ARGV[4] == 'running' and cur[3] ~= 'running'
if starts and ARGV[8] ~= '0' then
  local limit = tonumber(ARGV[8])
  local n = redis.call('SCARD', KEYS[7])
  if n >= limit then
    for _, id in ipairs(redis.call('SMEMBERS', KEYS[7])) do
      if redis.call('HGET', ARGV[10] .. id .. ':state', 'status') ~= 'running' then
        redis.call('SREM', KEYS[7], id)
        n = n - 1
      end
    end
    if n >= limit then return {'toomany', n} end
  end
end
local nmsgs = tonumber(ARGV[11])
local firstTrace = 14 + nmsgs
local first = firstTrace + 2 * tonumber(ARGV[12])
local firstHook = #ARGV - 3 * tonumber(ARGV[#ARGV])
local firstDrop = firstHook - 1 - tonumber(ARGV[firstHook - 1])
for i = first, firstDrop - 1, 3 do
  if redis.call('HEXISTS', KEYS[4], ARGV[i]) == 1 then return {'docexists', ARGV[i]} end
end
for i = firstTrace, first - 1, 2 do
  if redis.call('HSETNX', KEYS[6], ARGV[i], ARGV[i + 1]) == 0 then
    for j = firstTrace, i - 2, 2 do redis.call('HDEL', KEYS[6], ARGV[j]) end
    return {'traceexists', ARGV[i]}
  end
end
local base = 0
if nmsgs > 0 then
  local n
  for i = 14, firstTrace - 1, 1000 do
    n = redis.call('RPUSH', KEYS[2], unpack(ARGV, i, math.min(i + 999, firstTrace - 1)))
  end
  base = n - nmsgs
end
for i = first, firstDrop - 1, 3 do
  redis.call('HSET', KEYS[4], ARGV[i], ARGV[i + 1])
  redis.call('HSET', KEYS[3], ARGV[i], ARGV[i + 2])
end
for i = firstDrop, firstHook - 2 do
  redis.call('HDEL', KEYS[4], ARGV[i])
  redis.call('HDEL', KEYS[3], ARGV[i])
end
for i = firstHook, #ARGV - 1, 3 do
  redis.call('HSET', KEYS[9], ARGV[i], ARGV[i + 2])
  redis.call('ZADD', KEYS[10], ARGV[i + 1], ARGV[i])
end
redis.call('HSET', KEYS[1], 'version', ARGV[2], 'user', ARGV[3], 'status', ARGV[4], 'json', ARGV[5])
if ARGV[1] == '0' then redis.call('ZADD', KEYS[8], 'NX', 0, ARGV[9]) end
if ARGV[4] == 'running' then
  redis.call('SADD', KEYS[7], ARGV[9])
elseif cur[3] == 'running' then
  redis.call('SREM', KEYS[7], ARGV[9])
end
local out = {'ok', base, cur[3] or ''}
if first > firstTrace then
  local n = 0
  for i = firstTrace, first - 1, 2 do n = redis.call('RPUSH', KEYS[5], ARGV[i]) end
  local cap = tonumber(ARGV[13])
  while n > cap do
    local old = redis.call('LPOP', KEYS[5])
    redis.call('HDEL', KEYS[6], old)
    out[#out + 1] = old
    n = n - 1
  end
end
if ARGV[6] ~= '0' then
  for i = 1, 6 do redis.call('PEXPIRE', KEYS[i], ARGV[6]) end
  redis.call('PEXPIRE', KEYS[8], ARGV[6])
  if redis.call('EXISTS', KEYS[7]) == 1 then redis.call('PEXPIRE', KEYS[7], ARGV[6]) end
end
return out
`)

// deleteScript removes every key of a workflow and its entries in its
// user's listing and running set, so a deleted running workflow never
// keeps counting against the user's limit.
//
//	KEYS: state msgs docs docmeta traces tracedata lease userRunning userListing
//	ARGV: workflowId
//	reply: {"ok", traceId...} | {"missing"}
var deleteScript = newScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return {'missing'} end
local out = {'ok'}
for _, id in ipairs(redis.call('LRANGE', KEYS[5], 0, -1)) do out[#out + 1] = id end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7])
redis.call('SREM', KEYS[8], ARGV[1])
redis.call('ZREM', KEYS[9], ARGV[1])
return out
`)

// appendTraceScript appends a trace and drops the oldest beyond the cap. The
// trace keys expire with the workflow's state.
//
//	KEYS: state traces tracedata
//	ARGV: traceId traceJSON cap
//	reply: {"ok", droppedTraceId...} | {"missing"} | {"exists"}
var appendTraceScript = newScript(`
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

// claimScript takes or renews a round lease. Taking it increments the fence
// kept in the state hash (it outlives the lease) and names the owner in
// the hash's holder field, which releaseScript clears: a holder found
// when the lease key is gone is an owner whose lease ran out unreleased.
// Renewing keeps both. With the load argument it also reads what a run
// starts from (ClaimRoundLoad): the workflow's JSON and, when it is
// running, its messages.
//
//	KEYS: state lease [msgs, with load]
//	ARGV: owner ttlMs [load]
//	reply: the fence when owner holds the lease, 0 when another owner
//	       does, -1 when there is no such workflow; with load, a list of
//	       the fence and, when it is positive, the owner of the expired
//	       lease it took ("" for none), the workflow's JSON and then each
//	       message
var claimScript = redis.NewScript(`
local load = ARGV[3] ~= nil
if redis.call('EXISTS', KEYS[1]) == 0 then
  if load then return {-1} end
  return -1
end
local cur = redis.call('GET', KEYS[2])
if cur and cur ~= ARGV[1] then
  if load then return {0} end
  return 0
end
local fence
local expired = ''
if cur then
  fence = tonumber(redis.call('HGET', KEYS[1], 'fence') or '0')
  if fence == 0 then fence = redis.call('HINCRBY', KEYS[1], 'fence', 1) end
else
  expired = redis.call('HGET', KEYS[1], 'holder') or ''
  fence = redis.call('HINCRBY', KEYS[1], 'fence', 1)
  redis.call('HSET', KEYS[1], 'holder', ARGV[1])
end
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
if not load then return fence end
local st = redis.call('HMGET', KEYS[1], 'json', 'status')
local out = {fence, expired, st[1]}
if st[2] == 'running' then
  local msgs = redis.call('LRANGE', KEYS[3], 0, -1)
  for i = 1, #msgs do out[i + 3] = msgs[i] end
end
return out
`)

// releaseScript deletes a lease, and the state's holder field, only when
// owner holds it.
//
//	KEYS: lease state
//	ARGV: owner
var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  if redis.call('HGET', KEYS[2], 'holder') == ARGV[1] then redis.call('HDEL', KEYS[2], 'holder') end
  return redis.call('DEL', KEYS[1])
end
return 0
`)

// luaScript is a script with its source, for the EVAL that follows a
// NOSCRIPT reply to a call built by scriptCall.
type luaScript struct {
	*redis.Script
	src string
}

func newScript(src string) luaScript { return luaScript{redis.NewScript(src), src} }

// scriptCall returns the arguments of script's EVALSHA with keys and args:
// "evalsha", the hash, the number of keys, the keys, the arguments, as
// go-redis's EvalSha builds them. A caller that keeps keys boxed (Commit)
// builds the call itself, so that nothing is boxed again per call.
func scriptCall(script luaScript, keys []string, args ...any) []any {
	call := make([]any, 0, 3+len(keys)+len(args))
	call = append(call, "evalsha", script.Hash(), len(keys))
	for _, k := range keys {
		call = append(call, k)
	}
	return append(call, args...)
}

// evalPipelined sends the commands queue adds and then script's call (see
// scriptCall), in one pipeline: one round trip (on a cluster, one request
// to each node the commands reach, sent at once). If Redis has not cached
// the script yet it is sent again with EVAL. The script's reply decides
// the outcome: a failed index command does not undo a script that ran.
func (s *Store) evalPipelined(ctx context.Context, queue func(redis.Pipeliner), script luaScript, call []any) ([]any, error) {
	return evalIn(ctx, s.rdb.Pipeline, queue, nil, script, call)
}

// evalIn sends, in one pipeline that newPipe makes, the commands queue
// adds, script's call (EVALSHA, see scriptCall) and the commands tail
// adds. If Redis has not cached the script yet, the call is sent again as
// EVAL of the source, and tail after it (queue's commands have run
// already). Either may be nil.
func evalIn(ctx context.Context, newPipe func() redis.Pipeliner, queue, tail func(redis.Pipeliner), script luaScript, call []any) ([]any, error) {
	send := func(queue func(redis.Pipeliner), call []any) *redis.Cmd {
		p := newPipe()
		if queue != nil {
			queue(p)
		}
		cmd := redis.NewCmd(ctx, call...)
		if n, _ := call[2].(int); n > 0 {
			cmd.SetFirstKeyPos(3) // the slot a cluster client routes it to
		}
		_ = p.Process(ctx, cmd)
		if tail != nil {
			tail(p)
		}
		_, _ = p.Exec(ctx)
		return cmd
	}
	res, err := send(queue, call).Result()
	if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") { // (HasErrorPrefix allocates, even for nil)
		eval := slices.Clone(call)
		eval[0], eval[1] = "eval", script.src
		res, err = send(nil, eval).Result()
	}
	if err != nil {
		return nil, redisErr(err)
	}
	return replyArray(res)
}
