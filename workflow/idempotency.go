package workflow

import (
	"context"
	"time"
)

// DefaultIdempotencyWindow is how long the answer to a request sent with an
// Idempotency-Key is kept for replay (DESIGN §10.3, limits.idempotencyWindow).
const DefaultIdempotencyWindow = 24 * time.Hour

// DefaultIdempotencyBytesPerUser bounds what one user's kept answers hold
// (IdempotentAnswer.Size), limits.idempotencyBytesPerUser.
const DefaultIdempotencyBytesPerUser = 8 << 20

// IdempotencyEntryOverhead is what each kept answer counts beside its
// body and headers (its key, record and index entries), so a flood of
// tiny answers is bounded too.
const IdempotencyEntryOverhead = 256

// IdempotencyKeep says how an answer is kept: for Window, and within
// UserBytes of its user's kept answers (0: no bound), the answers that
// expire first dropped to make room.
type IdempotencyKeep struct {
	Window    time.Duration
	UserBytes int64
}

// IdempotentAnswer is the first answer to a request sent with an
// Idempotency-Key, kept so that a retry of the same request gets it again
// instead of doing the work twice.
type IdempotentAnswer struct {
	// Hash identifies the request the answer belongs to (the caller's
	// digest of its method, route and body): the same key sent with
	// another request is refused, not answered with this.
	Hash string
	// Status, Header and Body are the answer as it was sent; Header holds
	// only the headers worth replaying (e.g. Content-Type, Location).
	Status int
	Header map[string][]string
	Body   []byte
}

// Size is what the answer counts against its user's bound
// (IdempotencyKeep.UserBytes): its body, hash and headers, plus
// IdempotencyEntryOverhead.
func (a IdempotentAnswer) Size() int64 {
	n := len(a.Body) + len(a.Hash) + IdempotencyEntryOverhead
	for k, vs := range a.Header {
		for _, v := range vs {
			n += len(k) + len(v)
		}
	}
	return int64(n)
}

// IdempotencyRecord is what a store holds for one (user, key): a claim of
// a request still in progress (Answer nil, Token the claim's holder) or the
// kept answer.
type IdempotencyRecord struct {
	Token  string
	Answer *IdempotentAnswer
}

// IdempotencyStore keeps the answers of requests sent with an
// Idempotency-Key, per user, so they hold across every instance sharing
// the store. Both stores implement it; keys of different users never meet.
//
// A request claims its key with a token of its own before it does its
// work, then either saves its answer or releases the claim. A claim lasts
// ttl unless renewed (claimed again with the same token), so the key of a
// request whose instance died frees itself; an answer lasts the window it
// is saved with, and a user's kept answers stay within the bound they are
// saved with (the ones that expire first are dropped to make room).
type IdempotencyStore interface {
	// ClaimIdempotency claims (userID, key) for token until ttl passes:
	// when nothing is held for it, or token holds it already (the claim
	// is renewed), it returns claimed true. Otherwise it returns what is
	// held — another token's claim, or the kept answer — and false. The
	// check and the claim are one atomic step.
	ClaimIdempotency(ctx context.Context, userID, key, token string, ttl time.Duration) (rec IdempotencyRecord, claimed bool, err error)
	// SaveIdempotency replaces token's claim with the answer, kept for
	// keep.Window; when the user's kept answers then pass keep.UserBytes
	// (summing IdempotentAnswer.Size), those that expire first are
	// dropped until they fit. KindConflict, storing nothing, when token no
	// longer holds the claim (it expired, and maybe another request took
	// the key); KindInvalid, storing nothing, when the answer alone passes
	// keep.UserBytes.
	SaveIdempotency(ctx context.Context, userID, key, token string, a IdempotentAnswer, keep IdempotencyKeep) error
	// ReleaseIdempotency drops token's claim, so the next request with the
	// key does the work itself; it does nothing when token does not hold
	// it (a kept answer is never dropped).
	ReleaseIdempotency(ctx context.Context, userID, key, token string) error
}

// CheckIdempotencyArgs returns ctx's error, or KindInvalid when a user, key
// or token is empty or a duration is not positive: the stores' common
// argument check.
func CheckIdempotencyArgs(ctx context.Context, userID, key, token string, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	switch {
	case userID == "":
		return Errorf(KindInvalid, "a user is required")
	case key == "":
		return Errorf(KindInvalid, "an idempotency key is required")
	case token == "":
		return Errorf(KindInvalid, "a claim token is required")
	case d <= 0:
		return Errorf(KindInvalid, "duration %v is not positive", d)
	}
	return nil
}
