package workflow

import (
	"context"
	"time"
)

// Commit is one atomic change of a workflow: its new state, the messages
// appended by the change and the documents (with content) they carry.
type Commit struct {
	// Workflow is the new state. ID and UserID must be set. The store sets
	// Version to ExpectedVersion+1 in the workflow it returns, which may be
	// this one (see Store.Commit).
	Workflow *Workflow
	// ExpectedVersion is the version the caller read. Zero creates the
	// workflow, which must not exist yet.
	ExpectedVersion int64
	// Messages are appended in order. The store assigns WorkflowID and a
	// gap-free Seq; the caller sets ID (NewID(PrefixMessage)).
	Messages []Message
	// Documents are stored with their content. Each needs an ID and a Name;
	// empty content is a legitimate (zero-length) document. Each one's
	// metadata should also appear in the Documents of the message that
	// carries it.
	Documents []DocumentContent
	// DropDocuments are ids of the workflow's documents deleted with the
	// change (a stopped round's queued rounds' uploads, which no message
	// will carry): atomically, only when the commit applies. An id the
	// workflow does not hold is ignored.
	DropDocuments []string
	// Traces are stored with the change, in order, and only when it is
	// applied: a refused commit stores none of them. Each needs an ID not
	// stored yet (KindConflict otherwise, writing nothing) and the
	// workflow's id as WorkflowID; the store's trace cap applies as it
	// does to AppendTrace. The engine attaches the traces of a phase's
	// model calls to the commit that persists the phase, so a trace costs
	// no store write of its own.
	Traces []Trace
	// Fence, when positive, is the fencing token of the lease the caller
	// holds (see ClaimRound): the store refuses the commit with
	// KindConflict and writes nothing unless the workflow's current fence
	// equals it, so a holder whose lease was taken over cannot write. Zero
	// leaves the fence unchecked (API commits).
	Fence int64
	// Handover says the caller hands Workflow and Traces over for good:
	// neither they nor anything they reach (the checkpoint, the pending
	// approval, a trace's prompt, inputs and parsed outcome, their slices
	// and maps) will be changed by anyone after the call, whatever the
	// outcome. A store may then keep them as its own stored values instead
	// of copies (the memory store does). The engine's run commits set it:
	// a run goes on with the committed workflow and replaces it, never
	// changes it, and makes each trace once.
	Handover bool
	// RunningLimit, when positive, bounds the user's running workflows: a
	// commit that makes the workflow StatusRunning while its stored status
	// is not (or creates it running) is refused with KindTooMany, writing
	// nothing, unless the user has fewer than RunningLimit running
	// workflows. The check and the write are one atomic step, so the limit
	// holds across instances sharing the store. Zero leaves it unchecked.
	RunningLimit int
	// Webhook, on a create (ExpectedVersion 0), is the workflow's own
	// webhook subscription, stored with it; WebhookOutbox reads it back.
	Webhook *WebhookSubscription
	// Webhooks are deliveries entered in the store's outbox (see
	// WebhookOutbox) atomically with the change: a refused commit
	// enqueues none. The engine attaches them only to the commit that ends
	// or pauses a round (which may also start a queued round, the status
	// staying running).
	Webhooks []WebhookDelivery
}

// Page selects a page of a listing: at most Limit items after Cursor, an
// opaque value returned by the previous page ("" for the first page).
type Page struct {
	Limit  int
	Cursor string
}

// Store persists workflows, their messages, documents and traces.
//
// Implementations guarantee: Commit is atomic (either the new state, every
// message, document and trace are stored, or none is) and guarded by the
// expected version (a stale version returns KindConflict and writes
// nothing); message seqs are gap-free and unique per workflow; documents and
// traces are only reachable through their own workflow; unknown ids return
// an error of kind KindNotFound.
type Store interface {
	// Commit applies c atomically and returns the stored workflow and the
	// messages with their seqs. The store keeps copies of its own of what
	// it stores, never c's memory. The workflow returned may be c.Workflow
	// itself, its Version set, rather than a copy: a caller hands
	// c.Workflow over and goes on with the result (a workflow the caller
	// still shares, e.g. one another goroutine reads, must be committed as
	// a Clone). A commit that fails leaves c.Workflow unchanged, so it can
	// be retried as it is.
	Commit(ctx context.Context, c Commit) (*Workflow, []Message, error)
	// GetWorkflow returns the workflow with the given id.
	GetWorkflow(ctx context.Context, id string) (*Workflow, error)
	// ListWorkflows returns userID's workflows, newest first, and the cursor
	// of the next page ("" on the last page).
	ListWorkflows(ctx context.Context, userID string, p Page) ([]*Workflow, string, error)
	// ListAll returns every user's workflows, newest first, and the cursor
	// of the next page ("" on the last page), for administrators. Ordering,
	// page size (Page.Size) and cursors (EncodeCursor, DecodeCursor) follow
	// the rules of ListWorkflows: pages never repeat or skip a workflow that
	// exists throughout the paging, deleted workflows are never listed, and a
	// malformed cursor is KindInvalid.
	ListAll(ctx context.Context, p Page) ([]*Workflow, string, error)
	// DeleteWorkflow removes the workflow and everything it owns.
	DeleteWorkflow(ctx context.Context, id string) error
	// Messages returns up to limit messages with seq > afterSeq, in seq
	// order; limit <= 0 means all.
	Messages(ctx context.Context, workflowID string, afterSeq int64, limit int) ([]Message, error)
	// DocumentContent returns a document of the workflow with its bytes.
	DocumentContent(ctx context.Context, workflowID, documentID string) (DocumentContent, error)
	// AppendTrace stores a trace, keeping at most the store's cap of
	// newest traces per workflow.
	AppendTrace(ctx context.Context, t Trace) error
	// Traces returns the workflow's traces, oldest first.
	Traces(ctx context.Context, workflowID string) ([]Trace, error)
	// GetTrace returns one trace by id.
	GetTrace(ctx context.Context, traceID string) (Trace, error)
	// Ping reports whether the store can serve requests.
	Ping(ctx context.Context) error

	// Running returns the ids of every workflow whose stored status is
	// StatusRunning, in any order. Commit keeps this set up to date.
	Running(ctx context.Context) ([]string, error)
	// ClaimRound takes, or renews, the lease on workflowID's running round
	// for owner until ttl passes. It returns the lease's fencing token (> 0)
	// when owner now holds the lease, and 0 when another owner holds an
	// unexpired lease. The token is strictly increasing per workflow: a
	// claim that takes the lease (absent, expired, or held by another owner
	// whose lease expired) increments a counter kept with the workflow's
	// state, which outlives the lease; a renewal by the holder keeps its
	// token. Several gateway instances use it so that exactly one of them
	// runs a round, a round whose instance died is taken over once its
	// lease expires, and Commit.Fence refuses the writes of a former holder.
	ClaimRound(ctx context.Context, workflowID, owner string, ttl time.Duration) (fence int64, err error)
	// ReleaseRound gives up owner's lease (no-op when owner does not hold it).
	ReleaseRound(ctx context.Context, workflowID, owner string) error
}

// RoundClaim is the outcome of ClaimRoundLoad.
type RoundClaim struct {
	// Fence is the lease's fencing token when the owner now holds the
	// lease, 0 when another owner holds it.
	Fence int64
	// Workflow and, when its status is StatusRunning, all its Messages,
	// read atomically with the claim when Fence > 0 (nil otherwise).
	Workflow *Workflow
	Messages []Message
	// Expired is the owner whose lease this claim took after it had run
	// out without being released (its instance died, or stalled past
	// it): "" when the lease was free or released, or renewed by its
	// holder, and from a store that is not a RoundLoader.
	Expired string
}

// RoundLoader is a Store that can claim a round and read what its run
// starts from in one step (on Redis, one round trip instead of three),
// and say whose expired lease the claim took. The engine starts every run
// with ClaimRoundLoad, which uses it when the store, or a store it wraps
// (StoreAs), has it.
type RoundLoader interface {
	// ClaimRoundLoad is ClaimRound that, when owner now holds the lease
	// (Fence > 0), also returns the workflow and its messages (see
	// RoundClaim) and the owner of the expired lease it took, if any.
	// With an error the caller holds no lease to release (one taken
	// before a failure, e.g. a corrupt state, is released, or expires
	// with ttl when that fails).
	ClaimRoundLoad(ctx context.Context, workflowID, owner string, ttl time.Duration) (RoundClaim, error)
}

// releaseTimeout bounds the release of a lease after a failed read.
const releaseTimeout = 10 * time.Second

// ClaimRoundLoad claims workflowID's round for owner as s.ClaimRound does
// and, when owner now holds the lease, returns the workflow and, when it
// is running, all its messages: in one step when s is a RoundLoader or
// wraps one (StoreAs), else
// by GetWorkflow and Messages after the claim (then Expired is unknown:
// ""). When a read after the claim fails, the lease is released and the
// read's error returned (KindNotFound for a workflow deleted in between),
// with fence 0.
func ClaimRoundLoad(ctx context.Context, s Store, workflowID, owner string, ttl time.Duration) (RoundClaim, error) {
	if l := StoreAs[RoundLoader](s); l != nil {
		return l.ClaimRoundLoad(ctx, workflowID, owner, ttl)
	}
	fence, err := s.ClaimRound(ctx, workflowID, owner, ttl)
	if err != nil || fence == 0 {
		return RoundClaim{}, err
	}
	c := RoundClaim{Fence: fence}
	c.Workflow, err = s.GetWorkflow(ctx, workflowID)
	if err == nil && c.Workflow.Status == StatusRunning {
		c.Messages, err = s.Messages(ctx, workflowID, 0, 0)
	}
	if err != nil {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
		defer cancel()
		_ = s.ReleaseRound(rctx, workflowID, owner)
		return RoundClaim{}, err
	}
	return c, nil
}
