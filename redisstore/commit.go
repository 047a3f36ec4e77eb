package redisstore

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/workflow"
)

// Commit applies c in one round trip: one pipeline carrying the index writes
// that must precede the state (the entries in the user's listing and in the
// global listing on creation, the entry in the running set while the
// workflow runs) and the commit script, which checks the version, the fence
// and the user's running limit and writes the state, messages, documents
// and the user's running set atomically — or nothing: KindConflict on a
// stale version or fence or when a workflow to create exists already,
// KindTooMany when the user already runs c.RunningLimit workflows. Only a workflow leaving the running
// status costs a second round trip (both SREMs, pipelined, after the
// script); when that one fails, the applied commit still succeeds and the
// stale entries are skipped by readers.
//
// Index entries written before a conflicting script are harmless: readers
// check them against the workflow's state.
func (s *Store) Commit(ctx context.Context, c workflow.Commit) (_ *workflow.Workflow, _ []workflow.Message, err error) {
	defer workflow.Wrap(&err, "redisstore.Commit")
	if err := c.Validate(); err != nil {
		return nil, nil, err
	}
	if err := checkWorkflowID(ctx, c.Workflow.ID, true); err != nil {
		return nil, nil, err
	}
	wf := c.Workflow.Clone()
	wf.Version = c.ExpectedVersion + 1
	args, msgs, err := commitArgs(wf, c, s.opts.Retention.Milliseconds())
	if err != nil {
		return nil, nil, err
	}
	k := s.keys.workflow(wf.ID)
	keys := []string{k.state, k.msgs, k.docs, k.docmeta, k.traces, k.tracedata, s.keys.runningFor(wf.UserID)}
	running := wf.Status == workflow.StatusRunning
	reply, err := s.evalPipelined(ctx, func(p redis.Pipeliner) {
		userKey, allKey := s.keys.user(wf.UserID), s.keys.listing()
		if c.ExpectedVersion == 0 {
			p.ZAddNX(ctx, userKey, redis.Z{Member: wf.ID})
			p.ZAddNX(ctx, allKey, redis.Z{Member: wf.ID})
		}
		if s.opts.Retention > 0 {
			p.PExpire(ctx, userKey, s.opts.Retention)
			// Refreshed by every commit, so it outlives each workflow it
			// names.
			p.PExpire(ctx, allKey, s.opts.Retention)
		}
		if running {
			// The user's running set is kept by the script itself, so a
			// refused commit never counts against the user's limit.
			p.SAdd(ctx, s.keys.running(), wf.ID)
		}
	}, commitScript, keys, args...)
	if err != nil {
		return nil, nil, err
	}
	base, prev, err := commitOutcome(wf.ID, c.ExpectedVersion, reply)
	if workflow.KindOf(err) == workflow.KindNotFound && running {
		// The workflow is gone (deleted): take back the running-set entries
		// queued before the script, so nothing of it is left.
		_ = s.unlistRunning(ctx, wf.ID, wf.UserID)
	}
	if err != nil {
		return nil, nil, err
	}
	if !running && prev == string(workflow.StatusRunning) {
		// The commit is applied: an error here leaves stale running-set
		// entries, which Running and RunningFor skip, and must not be
		// reported as a commit that wrote nothing.
		_ = s.unlistRunning(ctx, wf.ID, wf.UserID)
	}
	for i := range msgs {
		msgs[i].Seq = base + int64(i) + 1
	}
	return wf, msgs, nil
}

// commitArgs encodes the script arguments of a commit (see commitScript) and
// returns the messages as stored, for Commit's result.
func commitArgs(wf *workflow.Workflow, c workflow.Commit, retentionMs int64) ([]any, []workflow.Message, error) {
	state, err := json.Marshal(wf)
	if err != nil {
		return nil, nil, workflow.WrapKind(workflow.KindInvalid, err, "workflow %s cannot be encoded", wf.ID)
	}
	args := make([]any, 0, 10+len(c.Messages)+3*len(c.Documents))
	args = append(args, strconv.FormatInt(c.ExpectedVersion, 10), strconv.FormatInt(wf.Version, 10),
		wf.UserID, string(wf.Status), state, strconv.FormatInt(retentionMs, 10),
		strconv.FormatInt(c.Fence, 10), strconv.Itoa(c.RunningLimit), wf.ID, len(c.Messages))
	msgs := make([]workflow.Message, len(c.Messages))
	for i, m := range c.Messages {
		m.WorkflowID = wf.ID
		m.Seq = 0
		m.Documents = slices.Clone(m.Documents)
		for j := range m.Documents {
			m.Documents[j].WorkflowID = wf.ID
		}
		b, err := json.Marshal(m)
		if err != nil {
			return nil, nil, workflow.WrapKind(workflow.KindInvalid, err, "message %s cannot be encoded", m.ID)
		}
		if err := json.Unmarshal(b, &msgs[i]); err != nil {
			return nil, nil, workflow.WrapKind(workflow.KindInternal, err, "message %s does not decode", m.ID)
		}
		args = append(args, b)
	}
	for _, d := range c.Documents {
		meta := d.Document
		meta.WorkflowID = wf.ID
		meta.Size = int64(len(d.Content))
		b, err := json.Marshal(meta)
		if err != nil {
			return nil, nil, workflow.WrapKind(workflow.KindInvalid, err, "document %s cannot be encoded", d.ID)
		}
		args = append(args, d.ID, b, d.Content)
	}
	return args, msgs, nil
}

// commitOutcome reads the commit script's reply: the seq base and the
// previous status, or the domain error for why nothing was written.
func commitOutcome(id string, expected int64, reply []any) (int64, string, error) {
	switch status := reply[0].(string); status {
	case "ok":
		base, err := replyInt(reply, 1)
		if err != nil {
			return 0, "", err
		}
		var prev string
		if len(reply) > 2 {
			prev, _ = reply[2].(string)
		}
		return base, prev, nil
	case "exists":
		return 0, "", workflow.Errorf(workflow.KindConflict, "workflow %s already exists", id)
	case "missing":
		return 0, "", workflow.Errorf(workflow.KindNotFound, "workflow %s not found", id)
	case "stale":
		cur, _ := reply[1].(string)
		return 0, "", workflow.Errorf(workflow.KindConflict, "workflow %s is at version %s, not %d", id, cur, expected)
	case "fenced":
		cur, _ := reply[1].(string)
		return 0, "", workflow.Errorf(workflow.KindConflict, "workflow %s is fenced at %s: its lease was taken over", id, cur)
	case "toomany":
		n, _ := replyInt(reply, 1)
		return 0, "", workflow.Errorf(workflow.KindTooMany, "%d rounds are already running for this user; wait for one to end", n)
	case "user":
		return 0, "", workflow.Errorf(workflow.KindInvalid, "workflow %s cannot change its user", id)
	case "docexists":
		doc, _ := reply[1].(string)
		return 0, "", workflow.Errorf(workflow.KindConflict, "document %s already exists in workflow %s", doc, id)
	default:
		return 0, "", workflow.Errorf(workflow.KindInternal, "commit script replied %q", status)
	}
}
