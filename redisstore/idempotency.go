package redisstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/workflow"
)

var _ workflow.IdempotencyStore = (*Store)(nil)

// An Idempotency-Key entry is one string key in the slot of its user,
// <prefix>:{u:<user>}:idem:<sha256 of the key, hex>, so a key of any length
// or spelling makes a short key that cannot reach another slot. Its value
// is "p" + the claim's token while the request is in progress (set NX with
// the claim's TTL), then "a" + the answer's JSON (with the window's TTL).
// A user's kept answers are listed beside, in the same slot:
// <prefix>:{u:<user>}:idemkept, a sorted set of the entries' hex names
// scored by when they expire (Unix ms), and <prefix>:{u:<user>}:idemsize,
// a hash of each entry's size (workflow.IdempotentAnswer.Size) with their
// total under "total"; the save script drops the expired ones and then,
// while the total passes the user's bound, the ones that expire first.

// idemKey names userID's entry for key.
func (k keys) idem(userID, key string) string {
	return k.user(userID).base + ":idem:" + idemName(key)
}

// idemName is an entry's name: the key's SHA-256, hex.
func idemName(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// idemClaimScript claims an entry: SET NX PX for a new claim, PEXPIRE to
// renew the caller's own; anything else is returned as it is.
//
//	KEYS: entry
//	ARGV: "p"+token ttlMs
//	reply: {"claimed"} | {"held", value}
var idemClaimScript = redis.NewScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return {'claimed'} end
local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {'claimed'}
end
return {'held', v}
`)

// idemSaveScript replaces the caller's claim with the answer, lists it
// among the user's kept answers and drops the expired ones, then the ones
// that expire first while the total passes the bound (0: none).
//
//	KEYS: entry kept sizes
//	ARGV: "p"+token "a"+answerJSON windowMs nowMs name size maxBytes entryPrefix
//	reply: 1 saved | 0 the claim is not the caller's
var idemSaveScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local now, window = tonumber(ARGV[4]), tonumber(ARGV[3])
local total = tonumber(redis.call('HGET', KEYS[3], 'total') or '0')
local function forget(name)
  total = total - tonumber(redis.call('HGET', KEYS[3], name) or '0')
  redis.call('HDEL', KEYS[3], name)
  redis.call('ZREM', KEYS[2], name)
end
for _, name in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)) do forget(name) end
forget(ARGV[5])
redis.call('SET', KEYS[1], ARGV[2], 'PX', window)
redis.call('ZADD', KEYS[2], now + window, ARGV[5])
redis.call('HSET', KEYS[3], ARGV[5], ARGV[6])
total = total + tonumber(ARGV[6])
local max = tonumber(ARGV[7])
while max > 0 and total > max do
  local first = redis.call('ZRANGE', KEYS[2], 0, 0)[1]
  if not first then break end
  forget(first)
  redis.call('DEL', ARGV[8] .. first)
end
redis.call('HSET', KEYS[3], 'total', math.max(total, 0))
local ttl = math.max(redis.call('PTTL', KEYS[2]), window)
redis.call('PEXPIRE', KEYS[2], ttl)
redis.call('PEXPIRE', KEYS[3], ttl)
return 1
`)

// idemReleaseScript deletes the caller's claim.
//
//	KEYS: entry
//	ARGV: "p"+token
var idemReleaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`)

// ClaimIdempotency claims (userID, key) for token in one script (see
// workflow.IdempotencyStore).
func (s *Store) ClaimIdempotency(ctx context.Context, userID, key, token string, ttl time.Duration) (_ workflow.IdempotencyRecord, _ bool, err error) {
	defer workflow.Wrap(&err, "redisstore.ClaimIdempotency(%q)", userID)
	if err := workflow.CheckIdempotencyArgs(ctx, userID, key, token, ttl); err != nil {
		return workflow.IdempotencyRecord{}, false, err
	}
	reply, err := idemClaimScript.Run(ctx, s.rdb, []string{s.keys.idem(userID, key)}, "p"+token, max(ttl.Milliseconds(), 1)).StringSlice()
	if err != nil {
		return workflow.IdempotencyRecord{}, false, redisErr(err)
	}
	if len(reply) == 1 && reply[0] == "claimed" {
		return workflow.IdempotencyRecord{Token: token}, true, nil
	}
	if len(reply) != 2 || reply[0] != "held" {
		return workflow.IdempotencyRecord{}, false, workflow.Errorf(workflow.KindInternal, "claim script replied %q", reply)
	}
	rec, err := parseIdem(reply[1])
	return rec, false, err
}

// parseIdem decodes an entry's value.
func parseIdem(v string) (workflow.IdempotencyRecord, error) {
	if token, ok := strings.CutPrefix(v, "p"); ok {
		return workflow.IdempotencyRecord{Token: token}, nil
	}
	raw, ok := strings.CutPrefix(v, "a")
	var a idemAnswer
	if !ok {
		return workflow.IdempotencyRecord{}, workflow.Errorf(workflow.KindInternal, "idempotency entry of unknown form")
	}
	if err := decodeRecord([]byte(raw), &a, &a.Layout, "idempotent answer"); err != nil {
		return workflow.IdempotencyRecord{}, err
	}
	return workflow.IdempotencyRecord{Answer: &workflow.IdempotentAnswer{
		Hash: a.Hash, Status: a.Status, Header: a.Header, Body: a.Body,
	}}, nil
}

// SaveIdempotency replaces token's claim with the answer, kept for
// keep.Window within keep.UserBytes of the user's answers, in one script.
func (s *Store) SaveIdempotency(ctx context.Context, userID, key, token string, a workflow.IdempotentAnswer, keep workflow.IdempotencyKeep) (err error) {
	defer workflow.Wrap(&err, "redisstore.SaveIdempotency(%q)", userID)
	if err := workflow.CheckIdempotencyArgs(ctx, userID, key, token, keep.Window); err != nil {
		return err
	}
	size := a.Size()
	if keep.UserBytes > 0 && size > keep.UserBytes {
		return workflow.Errorf(workflow.KindInvalid, "an answer of %d bytes passes the %d bytes kept per user", size, keep.UserBytes)
	}
	b, err := encodeRecord(idemAnswer{Layout: layout, Hash: a.Hash, Status: a.Status, Header: a.Header, Body: a.Body}, "idempotent answer of user", userID)
	if err != nil {
		return err
	}
	base := s.keys.user(userID).base
	n, err := idemSaveScript.Run(ctx, s.rdb, []string{s.keys.idem(userID, key), base + ":idemkept", base + ":idemsize"},
		"p"+token, "a"+string(b), max(keep.Window.Milliseconds(), 1), time.Now().UnixMilli(), idemName(key), size, keep.UserBytes, base+":idem:").Int64()
	if err != nil {
		return redisErr(err)
	}
	if n != 1 {
		return workflow.Errorf(workflow.KindConflict, "the claim on this idempotency key is no longer held")
	}
	return nil
}

// ReleaseIdempotency drops token's claim, if it still holds it.
func (s *Store) ReleaseIdempotency(ctx context.Context, userID, key, token string) (err error) {
	defer workflow.Wrap(&err, "redisstore.ReleaseIdempotency(%q)", userID)
	if err := workflow.CheckIdempotencyArgs(ctx, userID, key, token, time.Second); err != nil {
		return err
	}
	return redisErr(idemReleaseScript.Run(ctx, s.rdb, []string{s.keys.idem(userID, key)}, "p"+token).Err())
}
