package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/workflow"
)

var _ workflow.WebhookOutbox = (*Store)(nil)

// The webhook outbox (DESIGN §10.3). A user's deliveries live in the
// user's slot, so the commit script that ends a round enters them
// atomically with it:
//
//	<user base>:hooks      hash   delivery id -> hookRecord JSON
//	<user base>:hookdue    zset   pending delivery id -> due (ms); a claim
//	                              moves it to the lease's end
//	<user base>:hooklease  hash   delivery id -> token of its latest claim
//	<user base>:hookdone   zset   finished delivery id -> when (ms)
//	<wf prefix><id>:webhook string the workflow's subscription (JSON)
//
// Each finish drops the records finished more than hookKeep ago and
// keeps the four outbox keys for hookKeep and a day after it; a commit
// that enqueues refreshes that expiry too, so a user's outbox lives as
// long as deliveries flow and a week after. A store-wide index, partitioned like the others, names the users
// that have deliveries, so any instance finds them:
//
//	prefix:{hk<i>}:hookusers zset  escaped user id -> when a commit last
//	                               enqueued for the user (ms)
//
// A commit adds the user to the index in its pipeline, before its script;
// a claimer drops a user whose due set is empty only when no commit added
// the user within hookIndexGrace (a conditional ZREM), so an index entry
// is never dropped between a commit's index write and its script.
const (
	hooksSuffix     = ":hooks"
	hookDueSuffix   = ":hookdue"
	hookLeaseSuffix = ":hooklease"
	hookDoneSuffix  = ":hookdone"
	hookIndexGrace  = time.Minute
	// hookKeep is how long a finished delivery stays listable.
	hookKeep = 7 * 24 * time.Hour
	// hookOwnerKeep is how long a workflow's hook owner key outlives the
	// last commit that enqueued for it: a delivery is retried for a day,
	// then kept hookKeep, so this covers the records of that commit.
	hookOwnerKeep = hookKeep + 2*24*time.Hour
)

// hookOwner names the key that holds the user of a workflow with
// deliveries, written by each commit that enqueues some: the admin
// listing finds a deleted workflow's deliveries through it, the owner
// key being gone with the workflow.
func (k keys) hookOwner(id string) string { return k.prefix + ":hookowner:{" + id + "}" }

func (k keys) hookUsersPart(i int) string { return k.prefix + ":{hk" + strconv.Itoa(i) + "}:hookusers" }

// appendHooks appends c's deliveries and their count to the commit
// script's arguments (see commitScript).
func appendHooks(args []any, c workflow.Commit) ([]any, error) {
	for _, d := range c.Webhooks {
		d.Status, d.Lease = workflow.DeliveryPending, ""
		b, err := encodeRecord(toHookRecord(d), "webhook delivery", d.ID)
		if err != nil {
			return nil, err
		}
		args = append(args, d.ID, d.NextAttempt.UnixMilli(), b)
	}
	return append(args, len(c.Webhooks)), nil
}

// hookIndexCmds are a commit's pipelined writes of the outbox index
// entry and of the hook owner key, nil when it carries no delivery.
type hookIndexCmds struct {
	index *redis.IntCmd
	owner *redis.StatusCmd
}

// queueHookIndex queues, in a commit's pipeline before its script, the
// user's entry in the outbox index and the workflow's hook owner key when
// the commit carries deliveries (returning their commands), and the
// workflow's subscription on a create that has one.
func (s *Store) queueHookIndex(ctx context.Context, p redis.Pipeliner, c workflow.Commit, userID string) (cmds hookIndexCmds) {
	if len(c.Webhooks) > 0 {
		cmds.index = p.ZAdd(ctx, s.keys.hookUsersPart(hashPartition(userID, partitions)),
			redis.Z{Score: float64(time.Now().UnixMilli()), Member: url.QueryEscape(userID)})
		cmds.owner = p.Set(ctx, s.keys.hookOwner(c.Workflow.ID), userID, hookOwnerKeep)
		for _, k := range s.hookKeys(userID) { // no-ops on keys the script is about to make
			p.PExpire(ctx, k, hookKeep+24*time.Hour)
		}
	}
	sub := s.keys.user(userID).wfPrefix + c.Workflow.ID + ":webhook"
	switch {
	case c.ExpectedVersion == 0 && c.Webhook != nil:
		if b, err := encodeRecord(subscriptionRecord{layout, c.Webhook}, "webhook subscription of", c.Workflow.ID); err == nil {
			p.Set(ctx, sub, b, s.opts.Retention)
		}
	case s.opts.Retention > 0 && workflow.EventOf(c.Workflow.Status) != "":
		// Kept as long as the workflow: each round's end refreshes it.
		p.PExpire(ctx, sub, s.opts.Retention+refreshSlack(s.opts.Retention))
	}
	return cmds
}

// retryHookIndex writes the user's outbox index entry (and the hook owner
// key) again when the applied commit's pipelined write of it failed (on
// a cluster it goes to another shard than the script): without it the
// commit's deliveries would wait for the user's next one to be found (or
// not be listed once the workflow is deleted). A second failure is left
// at that.
func (s *Store) retryHookIndex(ctx context.Context, cmds hookIndexCmds, workflowID, userID string) {
	if cmds.index != nil && cmds.index.Err() != nil {
		_ = s.rdb.ZAdd(ctx, s.keys.hookUsersPart(hashPartition(userID, partitions)),
			redis.Z{Score: float64(time.Now().UnixMilli()), Member: url.QueryEscape(userID)}).Err()
	}
	if cmds.owner != nil && cmds.owner.Err() != nil {
		_ = s.rdb.Set(ctx, s.keys.hookOwner(workflowID), userID, hookOwnerKeep).Err()
	}
}

// claimHooksScript leases up to max due deliveries of one user, fewer
// when the user has leased ones: at most perUser (0: no cap) at once. A
// leased delivery is one in hooklease whose due score (its lease's end)
// is after now.
//
//	KEYS: hookdue hooks hooklease
//	ARGV: nowMs leaseEndMs max tokenPrefix perUser
//	reply: {"ok", (id token recordJSON)...} | {"empty"} (nothing pending at all)
var claimHooksScript = redis.NewScript(`
if redis.call('ZCARD', KEYS[1]) == 0 then return {'empty'} end
local take = tonumber(ARGV[3])
local cap = tonumber(ARGV[5])
if cap > 0 then
  local now = tonumber(ARGV[1])
  for _, id in ipairs(redis.call('HKEYS', KEYS[3])) do
    local sc = redis.call('ZSCORE', KEYS[1], id)
    if sc and tonumber(sc) > now then cap = cap - 1 end
  end
  take = math.min(take, cap)
  if take <= 0 then return {'ok'} end
end
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, take)
local out = {'ok'}
for i, id in ipairs(ids) do
  local rec = redis.call('HGET', KEYS[2], id)
  if rec then
    local tok = ARGV[4] .. i
    redis.call('ZADD', KEYS[1], ARGV[2], id)
    redis.call('HSET', KEYS[3], id, tok)
    out[#out + 1] = id
    out[#out + 1] = tok
    out[#out + 1] = rec
  else
    redis.call('ZREM', KEYS[1], id)
  end
end
return out
`)

// finishHookScript stores a delivery's outcome if the token still holds
// its lease.
//
//	KEYS: hookdue hooks hooklease hookdone
//	ARGV: id token recordJSON nextMs ("" when no longer pending) nowMs
//	      dropBeforeMs ttlMs
//	reply: 1 | 0 (the lease was taken over)
var finishHookScript = redis.NewScript(`
if redis.call('HGET', KEYS[3], ARGV[1]) ~= ARGV[2] then return 0 end
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', ARGV[6], 'LIMIT', 0, 100)) do
  redis.call('HDEL', KEYS[2], id)
  redis.call('ZREM', KEYS[4], id)
end
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
if ARGV[4] == '' then
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('ZADD', KEYS[4], ARGV[5], ARGV[1])
else
  redis.call('ZADD', KEYS[1], ARGV[4], ARGV[1])
end
for i = 1, 4 do redis.call('PEXPIRE', KEYS[i], ARGV[7]) end
return 1
`)

// pruneHookUserScript drops a user from the outbox index unless a commit
// added it after ARGV[2] (ms).
//
//	KEYS: hookusers partition
//	ARGV: escapedUser notAfterMs
var pruneHookUserScript = redis.NewScript(`
local sc = redis.call('ZSCORE', KEYS[1], ARGV[1])
if sc and tonumber(sc) <= tonumber(ARGV[2]) then redis.call('ZREM', KEYS[1], ARGV[1]) end
return 0
`)

func (s *Store) hookKeys(userID string) []string {
	base := s.keys.user(userID).base
	return []string{base + hookDueSuffix, base + hooksSuffix, base + hookLeaseSuffix, base + hookDoneSuffix}
}

// ClaimWebhooks reads the outbox index (one pipeline over its partitions)
// and leases due deliveries user by user, one script each (at most
// perUser leased per user at once), until limit; each claim starts one
// user further than the last this store made, so users take turns. A
// leased record that does not decode is not returned: it is stored as a
// failed delivery whose attempt gives the decode error (listed by the
// admin route when its workflow id can still be read), and reported in
// the error returned with the other deliveries.
func (s *Store) ClaimWebhooks(ctx context.Context, now time.Time, lease time.Duration, limit, perUser int) (_ []workflow.WebhookDelivery, err error) {
	defer workflow.Wrap(&err, "redisstore.ClaimWebhooks")
	var poisoned []error
	defer func() {
		if len(poisoned) > 0 {
			err = errors.Join(append([]error{err}, poisoned...)...)
		}
	}()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	users, err := s.hookUsers(ctx)
	if err != nil || len(users) == 0 {
		return nil, err
	}
	var out []workflow.WebhookDelivery
	c := hookClaim{now: now, lease: lease, perUser: max(perUser, 0), token: workflow.NewID("lease_") + ":"}
	start := int(s.hookTurn.Add(1) % uint64(len(users)))
	for n := range users {
		if len(out) >= limit {
			break
		}
		got, bad, err := s.claimUserHooks(ctx, users[(start+n)%len(users)], c, limit-len(out))
		out, poisoned = append(out, got...), append(poisoned, bad...)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// hookUser is a user of the outbox index: its partition and escaped id.
type hookUser struct {
	part int
	esc  string
}

// hookClaim is what every user's script of one claim is given.
type hookClaim struct {
	now     time.Time
	lease   time.Duration
	perUser int
	token   string
}

// hookUsers reads the outbox index, partition by partition, in one
// pipeline.
func (s *Store) hookUsers(ctx context.Context) ([]hookUser, error) {
	pipe := s.rdb.Pipeline()
	parts := make([]*redis.StringSliceCmd, partitions)
	for i := range parts {
		parts[i] = pipe.ZRange(ctx, s.keys.hookUsersPart(i), 0, -1)
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, redisErr(err)
	}
	var users []hookUser
	for i, cmd := range parts {
		for _, esc := range cmd.Val() {
			users = append(users, hookUser{i, esc})
		}
	}
	return users, nil
}

// claimUserHooks leases up to n due deliveries of u (one script), drops
// u from the index when it has none pending, and returns the deliveries
// with the errors of records that did not decode (each marked failed).
func (s *Store) claimUserHooks(ctx context.Context, u hookUser, c hookClaim, n int) ([]workflow.WebhookDelivery, []error, error) {
	user, uerr := url.QueryUnescape(u.esc)
	if uerr != nil {
		return nil, nil, nil
	}
	reply, err := claimHooksScript.Run(ctx, s.rdb, s.hookKeys(user)[:3], c.now.UnixMilli(), c.now.Add(c.lease).UnixMilli(),
		n, c.token, c.perUser).Slice()
	if err != nil {
		return nil, nil, redisErr(err)
	}
	if reply[0] == "empty" {
		_ = pruneHookUserScript.Run(ctx, s.rdb, []string{s.keys.hookUsersPart(u.part)}, u.esc,
			c.now.Add(-hookIndexGrace).UnixMilli()).Err()
		return nil, nil, nil
	}
	got, err := replyStrings(reply, 1)
	if err != nil {
		return nil, nil, err
	}
	var out []workflow.WebhookDelivery
	var poisoned []error
	for j := 0; j+2 < len(got); j += 3 {
		var r hookRecord
		if err := decodeRecord([]byte(got[j+2]), &r, &r.Layout, "webhook delivery"); err != nil {
			// One bad record stops no other delivery: it is marked
			// failed, the claim goes on, the error says so.
			poisoned = append(poisoned, s.failPoisoned(ctx, user, got[j], got[j+1], []byte(got[j+2]), err, c.now))
			continue
		}
		d := r.delivery()
		d.Lease = got[j+1]
		out = append(out, d)
	}
	return out, poisoned, nil
}

// failPoisoned stores the leased delivery id of user, whose record rec
// did not decode (decodeErr), as failed with that error, under its lease
// token, and returns the error to report. What can still be read of the
// record (its workflow and creation) is kept; nothing else, so no secret.
func (s *Store) failPoisoned(ctx context.Context, user, id, token string, rec []byte, decodeErr error, now time.Time) error {
	var partial struct {
		WorkflowID string    `json:"workflowId"`
		CreatedAt  time.Time `json:"createdAt"`
	}
	_ = json.Unmarshal(rec, &partial) // best effort: fields before a type error are kept
	why := "the stored delivery does not decode: " + decodeErr.Error()
	d := workflow.WebhookDelivery{ID: id, WorkflowID: partial.WorkflowID, UserID: user, CreatedAt: partial.CreatedAt,
		Status: workflow.DeliveryFailed, Lease: token, Attempts: []workflow.WebhookAttempt{{At: now.UTC(), Error: why}}}
	if d.CreatedAt.IsZero() {
		d.CreatedAt = now.UTC()
	}
	err := workflow.Errorf(workflow.KindInternal, "webhook delivery %s of user %q marked failed: %s", id, user, why)
	if ferr := s.FinishWebhook(ctx, d); ferr != nil {
		return errors.Join(err, ferr)
	}
	return err
}

// FinishWebhook stores d's outcome, one script in its user's slot; a
// finished delivery (delivered or failed) is stored without its secret.
func (s *Store) FinishWebhook(ctx context.Context, d workflow.WebhookDelivery) (err error) {
	defer workflow.Wrap(&err, "redisstore.FinishWebhook(%q)", d.ID)
	if err := checkID(ctx, "user id", d.UserID); err != nil {
		return err
	}
	r := toHookRecord(d)
	next := ""
	if d.Status == workflow.DeliveryPending {
		next = strconv.FormatInt(d.NextAttempt.UnixMilli(), 10)
	} else {
		r.Secret = "" // no attempt needs it any more: not kept at rest for the week it stays listed
	}
	b, err := encodeRecord(r, "webhook delivery", d.ID)
	if err != nil {
		return err
	}
	finished := time.Now()
	if n := len(d.Attempts); n > 0 {
		finished = d.Attempts[n-1].At
	}
	n, err := finishHookScript.Run(ctx, s.rdb, s.hookKeys(d.UserID), d.ID, d.Lease, b, next, finished.UnixMilli(),
		finished.Add(-hookKeep).UnixMilli(), (hookKeep + 24*time.Hour).Milliseconds()).Int64()
	if err != nil {
		return redisErr(err)
	}
	if n == 0 {
		return workflow.Errorf(workflow.KindConflict, "delivery %s is no longer leased to this caller", d.ID)
	}
	return nil
}

// WebhookDeliveries reads the records of the workflow's user and keeps
// the workflow's, oldest first, secrets cleared. A deleted workflow's
// deliveries are still listed (they are still delivered): its user is
// then read from the hook owner key its commits wrote.
func (s *Store) WebhookDeliveries(ctx context.Context, workflowID string) (_ []workflow.WebhookDelivery, err error) {
	defer workflow.Wrap(&err, "redisstore.WebhookDeliveries(%q)", workflowID)
	if err := checkWorkflowID(ctx, workflowID, false); err != nil {
		return nil, err
	}
	out := []workflow.WebhookDelivery{}
	user, _, err := s.ownerOf(ctx, workflowID)
	if workflow.KindOf(err) == workflow.KindNotFound {
		// Deleted (or never had deliveries): its deliveries, still
		// delivered, are found through the hook owner key.
		user, err = s.rdb.Get(ctx, s.keys.hookOwner(workflowID)).Result()
		if errors.Is(err, redis.Nil) {
			return out, nil
		}
		err = redisErr(err)
	}
	if err != nil {
		return nil, err
	}
	vals, err := s.rdb.HVals(ctx, s.keys.user(user).base+hooksSuffix).Result()
	if err != nil {
		return nil, redisErr(err)
	}
	for _, v := range vals {
		var r hookRecord
		if err := decodeRecord([]byte(v), &r, &r.Layout, "webhook delivery"); err != nil {
			continue // not known to be the workflow's; its next claim marks it failed
		}
		if r.WorkflowID == workflowID {
			d := r.delivery()
			d.Secret = ""
			out = append(out, d)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out, nil
}

// WebhookSubscription reads the subscription stored at the workflow's
// create, or nil.
func (s *Store) WebhookSubscription(ctx context.Context, workflowID string) (_ *workflow.WebhookSubscription, err error) {
	defer workflow.Wrap(&err, "redisstore.WebhookSubscription(%q)", workflowID)
	if err := checkWorkflowID(ctx, workflowID, false); err != nil {
		return nil, err
	}
	user, _, err := s.ownerOf(ctx, workflowID)
	if workflow.KindOf(err) == workflow.KindNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	b, err := s.rdb.Get(ctx, s.keys.user(user).wfPrefix+workflowID+":webhook").Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, redisErr(err)
	}
	var sub workflow.WebhookSubscription
	rec := subscriptionRecord{WebhookSubscription: &sub}
	if err := decodeRecord(b, &rec, &rec.Layout, "webhook subscription"); err != nil {
		return nil, err
	}
	sub.Events = slices.Clip(sub.Events)
	return &sub, nil
}
