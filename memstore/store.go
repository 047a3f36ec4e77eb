// Package memstore is the in-memory workflow.Store: one process, no
// persistence. It backs the gateway when no Redis is configured and the
// tests of packages that need a real store.
//
// Every value crosses the store boundary as a copy (workflows, messages
// and traces are kept as deep copies made by one function, see
// deepcopy.go; document bytes are copied), so a caller never shares memory
// with the store or with another caller. All methods are safe for
// concurrent use; Commit is atomic under one mutex.
package memstore

import (
	"context"
	"sync"
	"time"

	"github.com/twostep/twostep/workflow"
)

// DefaultTraceCap is the number of newest traces kept per workflow when no
// WithTraceCap option is given.
const DefaultTraceCap = 500

var (
	_ workflow.Store       = (*Store)(nil)
	_ workflow.RoundLoader = (*Store)(nil)
)

// Store is an in-memory workflow.Store. The zero value is not usable; call
// New.
type Store struct {
	traceCap  int
	now       func() time.Time
	retention time.Duration // 0: keep every workflow until deleted
	swept     time.Time     // when expired workflows were last evicted

	mu      sync.RWMutex
	wfs     map[string]*record             // by workflow id
	traces  map[string]string              // trace id -> workflow id
	running map[string]map[string]struct{} // user id -> ids of the user's running workflows
	due     []dueEntry                     // workflows awaiting approval, by expiresAt (approvals.go)
	dueAt   map[string]int64               // workflow id -> its entry's expiresAt in due

	standingMu sync.Mutex
	standing   map[string][]workflow.StandingApproval // user id -> standing approvals, oldest first (standing.go)

	idem idempotencies // Idempotency-Key entries, under their own lock
	// hooks is the webhook outbox by delivery id, hookOrder its ids in
	// the order they were enqueued (webhooks.go).
	hooks     map[string]*hook
	hookOrder []string
	// hookTurn is how many claims were made: each starts with the next
	// user in turn.
	hookTurn uint64

	// usage counts budgets (usage.go), under its own lock.
	usageMu sync.Mutex
	usage   map[usageKey]usageEntry

	exps experimentBox // experiments (experiments.go), under their own lock
}

// record is everything one workflow owns.
type record struct {
	userID  string
	status  workflow.Status
	version int64
	state   *workflow.Workflow // the store's own (deepcopy.go), Version included
	// msgs are the messages (messages.go), seq index+1, and traces the
	// kept traces, oldest first, at most traceCap, each pointing into
	// the record's slab of its kind. A stored message or trace is never
	// changed, and a list is only appended to or replaced, so a reader
	// may copy from a list outside the lock.
	msgs      []*workflow.Message
	msgSlab   slab[workflow.Message]
	docs      map[string]storedDoc
	traces    []*storedTrace
	traceSlab slab[storedTrace]
	lease     lease
	fence     int64     // fencing token of the latest lease taken; outlives the lease
	updated   time.Time // the last commit, kept only with a retention
	webhook   *workflow.WebhookSubscription
}

// storedDoc is a document as the store keeps it. content is never nil: an
// empty document (Size 0) is legitimate and reads back as empty bytes.
type storedDoc struct {
	meta    workflow.Document
	content []byte
}

// copyContent returns a copy of b that is never nil, so an empty document
// (nil or zero-length content) reads back the same way whichever it was
// committed as.
func copyContent(b []byte) []byte {
	return append(make([]byte, 0, len(b)), b...)
}

type storedTrace struct {
	id string
	t  workflow.Trace // the store's own (deepcopy.go)
}

// lease is the holder of a workflow's running round (see ClaimRound).
type lease struct {
	owner   string
	expires time.Time
}

// Option configures a Store.
type Option func(*Store)

// WithTraceCap keeps at most n newest traces per workflow (n <= 0 keeps the
// default, DefaultTraceCap).
func WithTraceCap(n int) Option {
	return func(s *Store) {
		if n > 0 {
			s.traceCap = n
		}
	}
}

// WithClock sets the clock leases are measured with (time.Now by default);
// tests use it to expire a lease without sleeping.
func WithClock(now func() time.Time) Option {
	return func(s *Store) {
		if now != nil {
			s.now = now
		}
	}
}

// WithRetention evicts a workflow, with its messages, documents and
// traces, d after its last commit, as the Redis store's key expiry does
// (d <= 0 keeps everything until deleted). An expired workflow reads as
// missing at once; its memory is freed by the next commit's sweep (at most
// one sweep per d/4, capped at a minute).
func WithRetention(d time.Duration) Option {
	return func(s *Store) {
		if d > 0 {
			s.retention = d
		}
	}
}

// New returns an empty store.
func New(opts ...Option) *Store {
	s := &Store{
		traceCap: DefaultTraceCap,
		now:      time.Now,
		wfs:      make(map[string]*record),
		traces:   make(map[string]string),
		running:  make(map[string]map[string]struct{}),
		dueAt:    make(map[string]int64),
		standing: make(map[string][]workflow.StandingApproval),
		hooks:    make(map[string]*hook),
		usage:    make(map[usageKey]usageEntry),
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Commit applies c atomically: on a stale ExpectedVersion (or, with
// ExpectedVersion 0, an existing workflow) it returns KindConflict and
// changes nothing. Message seqs continue the workflow's gap-free sequence;
// c's traces join the workflow's under the trace cap.
func (s *Store) Commit(ctx context.Context, c workflow.Commit) (_ *workflow.Workflow, _ []workflow.Message, err error) {
	defer workflow.Wrap(&err, "memstore.Commit")
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, nil, err
	}
	wf := c.Workflow // handed over: the store's own from here on
	if !c.Handover {
		wf = copyOf(wf)
	}
	stored, err := storeMessages(wf.ID, c.Messages)
	if err != nil {
		return nil, nil, err
	}
	traces, err := storeTraces(c.Traces, c.Handover)
	if err != nil {
		return nil, nil, err
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	rec, err := s.recordForCommit(wf, c.ExpectedVersion)
	if err != nil {
		return nil, nil, err
	}
	if err := s.checkGuards(c, rec, wf); err != nil {
		return nil, nil, err
	}
	for _, d := range c.Documents {
		if _, dup := rec.docs[d.ID]; dup {
			return nil, nil, workflow.Errorf(workflow.KindConflict, "document %s already exists in workflow %s", d.ID, wf.ID)
		}
	}
	if err := s.checkNewTraces(traces); err != nil {
		return nil, nil, err
	}
	msgs := make([]workflow.Message, len(stored))
	for i := range stored {
		stored[i].Seq = int64(len(rec.msgs)) + 1
		rec.msgs = append(rec.msgs, rec.msgSlab.keep(&stored[i]))
		msgs[i] = stored[i]
		own(&msgs[i])
	}
	for _, d := range c.Documents {
		meta := d.Document
		meta.WorkflowID = wf.ID
		meta.Size = int64(len(d.Content))
		rec.docs[d.ID] = storedDoc{meta: meta, content: copyContent(d.Content)}
	}
	for _, id := range c.DropDocuments {
		delete(rec.docs, id)
	}
	// Set only now: with Handover wf is c.Workflow itself, which a
	// refused commit leaves unchanged.
	wf.Version = c.ExpectedVersion + 1
	s.enqueueHooks(c)
	if c.ExpectedVersion == 0 && c.Webhook != nil {
		rec.webhook = copyOf(c.Webhook)
	}
	rec.state, rec.status, rec.version = wf, wf.Status, wf.Version
	if s.retention > 0 {
		rec.updated = s.now()
	}
	s.wfs[wf.ID] = rec
	s.appendTraces(wf.ID, rec, traces)
	s.indexRunning(wf.ID, rec)
	s.indexApproval(wf.ID, rec)
	s.sweepIfDue()
	// The caller's workflow, handed back rather than copied, which the
	// Store contract allows; redisstore does the same.
	c.Workflow.Version = wf.Version
	return c.Workflow, msgs, nil
}

// live returns the record of id unless it is missing or expired. The
// caller holds s.mu.
func (s *Store) live(id string) (*record, bool) {
	rec, ok := s.wfs[id]
	if !ok || s.expired(rec) {
		return nil, false
	}
	return rec, true
}

// expired reports whether rec outlived the retention.
func (s *Store) expired(rec *record) bool {
	return s.retention > 0 && s.now().Sub(rec.updated) >= s.retention
}

// sweepIfDue evicts expired workflows when the last sweep is older than
// a quarter of the retention (at most a minute). The caller holds s.mu
// for writing.
func (s *Store) sweepIfDue() {
	if s.retention <= 0 {
		return
	}
	now := s.now()
	if now.Sub(s.swept) < min(s.retention/4, time.Minute) {
		return
	}
	s.swept = now
	for id, rec := range s.wfs {
		if s.expired(rec) {
			s.remove(id, rec)
		}
	}
}

// remove deletes a workflow and everything it owns. The caller holds s.mu
// for writing.
func (s *Store) remove(id string, rec *record) {
	for _, t := range rec.traces {
		delete(s.traces, t.id)
	}
	delete(s.wfs, id)
	s.unindexRunning(id, rec.userID)
	s.unindexApproval(id)
}

// recordForCommit returns the record a commit of wf at expected applies to,
// or the conflict that forbids it. A new record is not yet stored.
func (s *Store) recordForCommit(wf *workflow.Workflow, expected int64) (*record, error) {
	rec, ok := s.wfs[wf.ID]
	if ok && s.expired(rec) {
		// Expired but not swept yet: it is gone, as on Redis.
		s.remove(wf.ID, rec)
		rec, ok = nil, false
	}
	switch {
	case expected == 0 && ok:
		return nil, workflow.Errorf(workflow.KindConflict, "workflow %s already exists", wf.ID)
	case expected == 0:
		return &record{userID: wf.UserID, docs: make(map[string]storedDoc)}, nil
	case !ok:
		return nil, workflow.Errorf(workflow.KindNotFound, "workflow %s not found", wf.ID)
	case rec.userID != wf.UserID:
		return nil, workflow.Errorf(workflow.KindInvalid, "workflow %s cannot change its user", wf.ID)
	}
	if rec.version != expected {
		return nil, workflow.Errorf(workflow.KindConflict, "workflow %s is at version %d, not %d", wf.ID, rec.version, expected)
	}
	return rec, nil
}

// checkGuards returns why c's fence or running limit forbids committing wf
// over rec: KindConflict for a stale fence, KindTooMany when wf would start
// running while its user already runs c.RunningLimit workflows. The caller
// holds s.mu for writing.
func (s *Store) checkGuards(c workflow.Commit, rec *record, wf *workflow.Workflow) error {
	if c.Fence > 0 && rec.fence != c.Fence {
		return workflow.Errorf(workflow.KindConflict, "workflow %s is fenced at %d, not %d: its lease was taken over", wf.ID, rec.fence, c.Fence)
	}
	starts := wf.Status == workflow.StatusRunning && rec.status != workflow.StatusRunning
	if c.RunningLimit > 0 && starts {
		if n := len(s.running[wf.UserID]); n >= c.RunningLimit {
			return workflow.Errorf(workflow.KindTooMany, "%d rounds are already running for this user (limit %d); wait for one to end", n, c.RunningLimit)
		}
	}
	return nil
}

// GetWorkflow returns a copy of the workflow, or KindNotFound.
func (s *Store) GetWorkflow(ctx context.Context, id string) (_ *workflow.Workflow, err error) {
	defer workflow.Wrap(&err, "memstore.GetWorkflow(%q)", id)
	if err := checkID(ctx, "workflow id", id); err != nil {
		return nil, err
	}
	s.mu.RLock()
	rec, ok := s.live(id)
	var state *workflow.Workflow
	if ok {
		state = rec.state
	}
	s.mu.RUnlock()
	if !ok {
		return nil, workflow.Errorf(workflow.KindNotFound, "workflow %s not found", id)
	}
	// A stored workflow is never changed, only replaced: copying it
	// outside the lock is safe.
	return copyOf(state), nil
}

// Ping reports whether the store serves requests: always, unless ctx is
// done.
func (s *Store) Ping(ctx context.Context) error { return ctx.Err() }
