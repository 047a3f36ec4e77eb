package redisstore

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/workflow"
)

// Commit applies c. A step is one round trip: one pipeline carrying the
// index writes that must precede the state (the workflow's ref in its
// running-set partition while it runs, in its listing partition on
// creation, and the retention of both and of its owner key) and the commit
// script, which checks the version, the fence and the user's running limit
// and writes the state, messages, documents, traces, the user's listing and
// the user's running set atomically, in the user's slot — or nothing:
// KindConflict on a stale version or fence or when a workflow to create
// exists already (for any user), KindTooMany when the user already runs
// c.RunningLimit workflows. The index entries of c.Traces go in the same
// pipeline, as do the deletions of entries of traces earlier commits
// dropped past the cap (tracedrop.go). A create first claims the id (SET
// NX of its owner key, one more round trip), so one id never names
// workflows of two users. Only a workflow leaving the running status costs another round
// trip (the SREM of its running-set entry, after the script); when that
// one fails, the applied commit still succeeds and the stale entry is
// skipped by readers.
//
// A workflow stored awaiting approval gets its approval index entry in the
// same pipeline (approvals.go); one leaving that status costs a ZREM after
// the script, as the running set's SREM. Index entries written before a
// conflicting script are harmless: readers check them against the
// workflow's state.
func (s *Store) Commit(ctx context.Context, c workflow.Commit) (_ *workflow.Workflow, _ []workflow.Message, err error) {
	defer workflow.Wrap(&err, "redisstore.Commit")
	if err := c.Validate(); err != nil {
		return nil, nil, err
	}
	if err := checkWorkflowID(ctx, c.Workflow.ID, true); err != nil {
		return nil, nil, err
	}
	// The state is encoded from a shallow copy with the new version; the
	// caller's workflow gets it only once the commit applied (a refused
	// commit leaves it unchanged) and is handed back, not a deep copy, as
	// the Store contract allows.
	view := *c.Workflow
	wf := &view
	wf.Version = c.ExpectedVersion + 1
	head := s.calls.head(s.keys, wf.ID, wf.UserID)
	call, msgs, err := commitArgs(wf, c, s.opts, head)
	if err != nil {
		return nil, nil, err
	}
	if c.ExpectedVersion == 0 {
		if err := s.claimID(ctx, wf.ID, wf.UserID); err != nil {
			return nil, nil, err
		}
	}
	eval := s.evalPipelined
	if c.Fence == 0 {
		eval = s.evalDurable // the API answers a client with it
	}
	drops := s.takeDrops()
	defer drops.requeue()
	ix := s.planIndex(c, wf, head)
	reply, err := eval(ctx, func(p redis.Pipeliner) {
		drops.queue(ctx, p)
		ix.queue(ctx, s, p)
	}, commitScript, call)
	if err != nil {
		return nil, nil, err
	}
	base, prev, dropped, err := commitOutcome(wf.ID, c.ExpectedVersion, reply)
	if err != nil {
		return nil, nil, s.refused(ctx, c, wf, head, reply, err)
	}
	s.applied(ctx, c, wf, ix, prev, dropped)
	for i := range msgs {
		msgs[i].Seq = base + int64(i) + 1
	}
	c.Workflow.Version = wf.Version
	return c.Workflow, msgs, nil
}

// commitIndex is the index writes one commit queues in its pipeline,
// before its script, and their replies.
type commitIndex struct {
	c    workflow.Commit
	wf   *workflow.Workflow
	head *commitHead
	// refresh are the keys whose TTL this commit refreshes, as of
	// refreshAt.
	refresh   []string
	refreshAt time.Time
	// addRunning says the store-wide running entry is (re)added.
	addRunning bool

	refreshCmds []*redis.BoolCmd
	addCmd      *redis.IntCmd
	hookIndex   hookIndexCmds
}

// planIndex decides the index writes of c, which stores wf.
func (s *Store) planIndex(c workflow.Commit, wf *workflow.Workflow, head *commitHead) *commitIndex {
	ix := &commitIndex{c: c, wf: wf, head: head, refreshAt: s.index.clock()}
	switch {
	case s.opts.Retention <= 0:
	case c.ExpectedVersion == 0:
		// A create always sets them: its owner key was just claimed with
		// the bare retention, and ZADDNX may have made the partition anew
		// (its last entry deleted) without a TTL.
		ix.refresh = []string{head.listKey, head.ownerKey}
	default:
		ix.refresh = s.index.stale(refreshSlack(s.opts.Retention), head.listKey, head.ownerKey)
	}
	// The user's running set is kept by the script itself, so a refused
	// commit never counts against the user's limit; the store-wide entry
	// is for the recovery scan (Running), added by a round's first commit
	// and again at least every runningRefresh.
	ix.addRunning = wf.Status == workflow.StatusRunning && !s.index.listedRunning(wf.ID, c.Fence)
	return ix
}

// queue adds the index writes to p.
func (ix *commitIndex) queue(ctx context.Context, s *Store, p redis.Pipeliner) {
	head, wf := ix.head, ix.wf
	if ix.c.ExpectedVersion == 0 {
		p.ZAddNX(ctx, head.listKey, redis.Z{Member: head.entry})
	}
	for _, k := range ix.refresh {
		// So each outlives the workflows it names (see indexCache).
		ix.refreshCmds = append(ix.refreshCmds, p.PExpire(ctx, k, s.opts.Retention+refreshSlack(s.opts.Retention)))
	}
	if ix.addRunning {
		ix.addCmd = p.SAdd(ctx, head.runningKey, head.boxedEntry)
	}
	if awaiting(wf) {
		s.indexApproval(ctx, p, wf, head.entry)
	}
	ix.hookIndex = s.queueHookIndex(ctx, p, ix.c, wf.UserID)
	for _, t := range ix.c.Traces {
		// As AppendTrace's: a stored trace is always findable by id.
		p.Set(ctx, s.keys.trace(t.ID), head.boxedEntry, s.opts.Retention)
	}
}

// refused takes back what a commit the script refused (err) left in the
// indexes, and returns the error to report.
func (s *Store) refused(ctx context.Context, c workflow.Commit, wf *workflow.Workflow, head *commitHead, reply []any, err error) error {
	if len(c.Traces) > 0 && reply[0] != "traceexists" {
		// The traces were not stored: take back their index entries (an
		// existing trace keeps its own).
		_ = s.dropTraceEntries(ctx, traceIDs(c.Traces))
	}
	if workflow.KindOf(err) == workflow.KindNotFound {
		if wf.Status == workflow.StatusRunning {
			// The workflow is gone (deleted), or is another user's: take
			// back the running-set entry queued before the script, so
			// nothing of it is left.
			_ = s.unlistRunning(ctx, wf.ID, wf.UserID)
		}
		if awaiting(wf) {
			_ = s.unlistApproval(ctx, wf.ID, wf.UserID) // as the running-set entry
		}
		if other, _, oerr := s.ownerOf(ctx, wf.ID); oerr == nil && other != wf.UserID {
			return workflow.Errorf(workflow.KindInvalid, "workflow %s cannot change its user", wf.ID)
		}
	}
	if c.ExpectedVersion == 0 && workflow.KindOf(err) == workflow.KindTooMany {
		// A refused create leaves nothing: neither its claim on the id nor
		// its index entries (best effort; readers skip what is left).
		pipe := s.rdb.Pipeline()
		pipe.Del(ctx, head.ownerKey)
		pipe.Del(ctx, head.wfPrefix.(string)+wf.ID+":webhook")
		pipe.ZRem(ctx, head.listKey, head.entry)
		pipe.SRem(ctx, head.runningKey, head.entry)
		_, _ = pipe.Exec(ctx)
	}
	return err
}

// applied keeps the caches and indexes after the commit of wf applied:
// prev is the status it had, dropped the traces the cap dropped. Its
// failures are not the commit's: a stale entry left is skipped by
// readers.
func (s *Store) applied(ctx context.Context, c workflow.Commit, wf *workflow.Workflow, ix *commitIndex, prev string, dropped []string) {
	s.owners.put(wf.ID, wf.UserID)
	s.retryHookIndex(ctx, ix.hookIndex, wf.ID, wf.UserID)
	// Only the index writes that succeeded are remembered: one that failed
	// (another shard's error) is sent again by the next commit.
	for i, cmd := range ix.refreshCmds {
		if cmd.Err() == nil {
			s.index.refreshed(ix.refreshAt, ix.refresh[i:i+1])
		}
	}
	running := wf.Status == workflow.StatusRunning
	if running {
		if c.ExpectedVersion != 0 && prev != string(workflow.StatusRunning) && ix.addCmd != nil {
			// It runs again: added again after the script, as a late
			// unlistRunning of the commit before (which ended or paused the
			// round) may have removed the entry added before it.
			ix.addCmd = s.rdb.SAdd(ctx, ix.head.runningKey, ix.head.boxedEntry)
		}
		if ix.addCmd != nil && ix.addCmd.Err() == nil {
			s.index.setRunning(wf.ID, c.Fence)
		}
	} else {
		// The round is over: its next commit may be far off, or never
		// come, so the head is not kept for it (the cache holds the
		// workflows that run).
		s.calls.forget(wf.ID)
	}
	if !running && prev == string(workflow.StatusRunning) {
		// An error here leaves a stale running-set entry, which Running
		// skips, and must not be reported as a commit that wrote nothing.
		_ = s.unlistRunning(ctx, wf.ID, wf.UserID)
	}
	if !awaiting(wf) && prev == string(workflow.StatusAwaitingApproval) {
		// The decision (or expiry, stop...) is applied: as above, a
		// failed ZREM leaves a stale entry, which DueApprovals removes.
		_ = s.unlistApproval(ctx, wf.ID, wf.UserID)
	}
	if len(dropped) > 0 {
		// Past the trace cap: their index entries go with a later
		// pipeline (tracedrop.go), so the step stays one round trip.
		s.dropLater(ctx, dropped)
	}
}

// traceIDs returns the ids of ts.
func traceIDs(ts []workflow.Trace) []string {
	ids := make([]string, len(ts))
	for i, t := range ts {
		ids[i] = t.ID
	}
	return ids
}

// claimID makes userID the owner of workflow id (SET NX of the owner key,
// with the retention as its TTL): KindConflict when another user's
// workflow has the id. The owner key of the same user may exist already —
// a create that failed after its claim, retried — and is kept.
func (s *Store) claimID(ctx context.Context, id, userID string) error {
	prev, err := s.setDurable(ctx, s.keys.owner(id), userID, redis.SetArgs{Mode: "NX", Get: true, TTL: s.opts.Retention})
	switch {
	case errors.Is(err, redis.Nil):
		return nil
	case err != nil:
		return redisErr(err)
	case prev != userID:
		return workflow.Errorf(workflow.KindConflict, "workflow %s already exists", id)
	}
	return nil
}

// commitArgs returns the commit script's call (see scriptCall): head (the
// call's start up to its keys, see commitCalls) and the script arguments
// (see commitScript), the records encoded (record.go), and the messages
// as committed (their own copies, with the workflow id set), for Commit's
// result: the same JSON a read gives, which is all the engine relies on
// (memstore answers the same way).
func commitArgs(wf *workflow.Workflow, c workflow.Commit, o Options, head *commitHead) (args []any, msgs []workflow.Message, err error) {
	args = make([]any, 0, len(head.start)+15+len(c.Messages)+2*len(c.Traces)+3*len(c.Documents)+len(c.DropDocuments)+3*len(c.Webhooks))
	args = append(args, head.start...)
	// Numbers go as int64 or int: go-redis writes them in decimal, the
	// bytes strconv would give, without a string and its box per number
	// (a value under 256 is boxed without allocating at all).
	args = append(args, c.ExpectedVersion, wf.Version, head.boxedUser, boxedStatus(wf.Status))
	state, err := encodeState(wf)
	if err != nil {
		return nil, nil, err
	}
	args = append(args, state, o.Retention.Milliseconds(), c.Fence, c.RunningLimit, head.boxedID, head.wfPrefix, len(c.Messages),
		len(c.Traces), o.TraceCap)
	msgs = make([]workflow.Message, len(c.Messages))
	for i, m := range c.Messages {
		m.WorkflowID = wf.ID
		m.Seq = 0
		m.Documents = slices.Clone(m.Documents)
		for j := range m.Documents {
			m.Documents[j].WorkflowID = wf.ID
		}
		rec, err := encodeMessage(&m)
		if err != nil {
			return nil, nil, err
		}
		m.Parameters = workflow.CloneParams(m.Parameters)
		msgs[i] = m
		args = append(args, rec)
	}
	for i := range c.Traces {
		t := &c.Traces[i]
		rec, err := encodeTrace(t)
		if err != nil {
			return nil, nil, err
		}
		args = append(args, t.ID, rec)
	}
	for _, d := range c.Documents {
		meta := d.Document
		meta.WorkflowID = wf.ID
		meta.Size = int64(len(d.Content))
		rec, err := encodeDocument(&meta)
		if err != nil {
			return nil, nil, err
		}
		args = append(args, d.ID, rec, d.Content)
	}
	for _, id := range c.DropDocuments {
		args = append(args, id)
	}
	args = append(args, len(c.DropDocuments))
	if args, err = appendHooks(args, c); err != nil {
		return nil, nil, err
	}
	return args, msgs, nil
}

// commitOutcome reads the commit script's reply: the seq base, the
// previous status and the ids of the traces dropped beyond the cap, or the
// domain error for why nothing was written.
func commitOutcome(id string, expected int64, reply []any) (base int64, prev string, dropped []string, err error) {
	switch status := reply[0].(string); status {
	case "ok":
		if base, err = replyInt(reply, 1); err != nil {
			return 0, "", nil, err
		}
		if len(reply) > 2 {
			prev, _ = reply[2].(string)
		}
		if len(reply) > 3 {
			if dropped, err = replyStrings(reply, 3); err != nil {
				return 0, "", nil, err
			}
		}
		return base, prev, dropped, nil
	case "exists":
		err = workflow.Errorf(workflow.KindConflict, "workflow %s already exists", id)
	case "missing":
		err = workflow.Errorf(workflow.KindNotFound, "workflow %s not found", id)
	case "stale":
		cur, _ := reply[1].(string)
		err = workflow.Errorf(workflow.KindConflict, "workflow %s is at version %s, not %d", id, cur, expected)
	case "fenced":
		cur, _ := reply[1].(string)
		err = workflow.Errorf(workflow.KindConflict, "workflow %s is fenced at %s: its lease was taken over", id, cur)
	case "toomany":
		n, _ := replyInt(reply, 1)
		err = workflow.Errorf(workflow.KindTooMany, "%d rounds are already running for this user; wait for one to end", n)
	case "user":
		err = workflow.Errorf(workflow.KindInvalid, "workflow %s cannot change its user", id)
	case "docexists":
		doc, _ := reply[1].(string)
		err = workflow.Errorf(workflow.KindConflict, "document %s already exists in workflow %s", doc, id)
	case "traceexists":
		tr, _ := reply[1].(string)
		err = workflow.Errorf(workflow.KindConflict, "trace %s already exists", tr)
	default:
		err = workflow.Errorf(workflow.KindInternal, "commit script replied %q", status)
	}
	return 0, "", nil, err
}

// commitHead is the start of a workflow's commit call — scriptCall's
// "evalsha", the script's hash, the number of keys and the keys — and its
// key prefix, id and user, boxed for go-redis once per workflow instead of
// at every commit (eight keys built and boxed, a key slice and go-redis's
// copy of the call: a fifth of a step commit's allocations).
type commitHead struct {
	user  string
	start []any
	// wfPrefix, boxedID and boxedUser are the workflow's key prefix, id
	// and user as arguments.
	wfPrefix, boxedID, boxedUser any
	// entry is the workflow's ref in the store-wide indexes (boxedEntry
	// as an argument); listKey and runningKey name its partitions of the
	// admin listing and of the running set, ownerKey its owner key.
	entry                         string
	boxedEntry                    any
	listKey, runningKey, ownerKey string
}

// boxedStatuses are the statuses as script arguments, boxed once.
var boxedStatuses = func() map[workflow.Status]any {
	m := map[workflow.Status]any{}
	for _, st := range []workflow.Status{workflow.StatusRunning, workflow.StatusCompleted, workflow.StatusFailed,
		workflow.StatusStopped, workflow.StatusAwaitingApproval} {
		m[st] = string(st)
	}
	return m
}()

// boxedStatus is st as a script argument, boxed once for a known status.
func boxedStatus(st workflow.Status) any {
	if b, ok := boxedStatuses[st]; ok {
		return b
	}
	return string(st)
}

// commitCalls keeps the commit heads of the workflows whose rounds this
// process runs, by workflow id: a commit that ends a round drops its
// workflow's head; when full it starts again (a miss builds the head
// anew).
type commitCalls struct {
	mu sync.Mutex
	m  map[string]*commitHead
}

// commitCallsSize bounds commitCalls: about 900 bytes an entry.
const commitCallsSize = 1 << 12

// head returns the commit head of workflow id of userID.
func (c *commitCalls) head(k keys, id, userID string) *commitHead {
	c.mu.Lock()
	defer c.mu.Unlock()
	if h, ok := c.m[id]; ok && h.user == userID {
		return h
	}
	uk := k.user(userID)
	wk := uk.workflow(id)
	entry, part := ref(id, userID), partition(id)
	h := &commitHead{user: userID, wfPrefix: uk.wfPrefix, boxedID: id, boxedUser: userID,
		start: scriptCall(commitScript, []string{wk.state, wk.msgs, wk.docs, wk.docmeta, wk.traces, wk.tracedata, uk.running, uk.listing,
			uk.base + hooksSuffix, uk.base + hookDueSuffix}),
		entry: entry, boxedEntry: entry,
		listKey: k.listingPart(part), runningKey: k.runningPart(part), ownerKey: k.owner(id)}
	if c.m == nil || len(c.m) >= commitCallsSize {
		c.m = make(map[string]*commitHead)
	}
	c.m[id] = h
	return h
}

// forget drops workflow id's head (deleted: its keys are gone).
func (c *commitCalls) forget(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, id)
}
