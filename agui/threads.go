package agui

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/twostep/twostep/workflow"
)

// threadMark marks a kept idempotency answer as a thread's workflow; a
// request's answer kept under the same key (impossible: request keys have
// no spaces) would carry its request digest instead.
const threadMark = "agui-thread"

// threadClaimTTL is how long creating a thread's workflow may take before
// its claim frees itself.
const threadClaimTTL = time.Minute

// threads keeps (user, threadId) → workflow id in the store's idempotency
// records, which every instance sharing the store reads, per user.
type threads struct {
	store workflow.IdempotencyStore
	// keep is how long a thread is remembered after it was made.
	keep time.Duration
}

// threadKey is the record key of threadID: a space keeps it apart from
// every Idempotency-Key a request can carry.
func threadKey(threadID string) string {
	sum := sha256.Sum256([]byte(threadID))
	return "agui thread " + hex.EncodeToString(sum[:])
}

// lookup returns the workflow of (userID, threadID); when the thread is
// unknown it claims it and returns a claim token instead, which the
// caller settles with remember or forget. KindConflict while another run
// is starting the same thread.
func (t threads) lookup(ctx context.Context, userID, threadID string) (workflowID, token string, err error) {
	token = workflow.NewID("thr_")
	rec, claimed, err := t.store.ClaimIdempotency(ctx, userID, threadKey(threadID), token, threadClaimTTL)
	switch {
	case err != nil:
		return "", "", err
	case claimed:
		return "", token, nil
	case rec.Answer == nil:
		return "", "", workflow.Errorf(workflow.KindConflict, "another run is starting this thread; retry when it has begun")
	case rec.Answer.Hash != threadMark:
		return "", "", workflow.Errorf(workflow.KindConflict, "this thread id cannot be used")
	}
	return string(rec.Answer.Body), "", nil
}

// remember settles a claim: threadID is workflowID's.
func (t threads) remember(ctx context.Context, userID, threadID, token, workflowID string) error {
	return t.store.SaveIdempotency(ctx, userID, threadKey(threadID), token,
		workflow.IdempotentAnswer{Hash: threadMark, Status: 200, Body: []byte(workflowID)}, workflow.IdempotencyKeep{Window: t.keep})
}

// forget drops a claim whose workflow was not made.
func (t threads) forget(userID, threadID, token string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = t.store.ReleaseIdempotency(ctx, userID, threadKey(threadID), token)
}
