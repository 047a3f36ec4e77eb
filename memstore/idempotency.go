package memstore

import (
	"context"
	"maps"
	"sync"
	"time"

	"github.com/twostep/twostep/workflow"
)

var _ workflow.IdempotencyStore = (*Store)(nil)

// idemSweepEvery is how often a claim drops the expired entries.
const idemSweepEvery = time.Minute

// idempotencies holds the Idempotency-Key entries, under a lock of their
// own: they share nothing with the workflows.
type idempotencies struct {
	mu      sync.Mutex
	entries map[idemKey]idemEntry
	swept   time.Time
}

type idemKey struct{ user, key string }

// idemEntry is a claim (answer nil) or a kept answer, until expires.
type idemEntry struct {
	token   string
	answer  *workflow.IdempotentAnswer
	expires time.Time
}

// ClaimIdempotency claims (userID, key) for token, under the entries' one
// lock (see workflow.IdempotencyStore).
func (s *Store) ClaimIdempotency(ctx context.Context, userID, key, token string, ttl time.Duration) (_ workflow.IdempotencyRecord, _ bool, err error) {
	defer workflow.Wrap(&err, "memstore.ClaimIdempotency(%q)", userID)
	if err := workflow.CheckIdempotencyArgs(ctx, userID, key, token, ttl); err != nil {
		return workflow.IdempotencyRecord{}, false, err
	}
	m := &s.idem
	m.mu.Lock()
	defer m.mu.Unlock()
	now := s.now()
	m.sweep(now)
	k := idemKey{userID, key}
	if e, ok := m.entries[k]; ok && now.Before(e.expires) && (e.answer != nil || e.token != token) {
		return workflow.IdempotencyRecord{Token: e.token, Answer: copyOf(e.answer)}, false, nil
	}
	if m.entries == nil {
		m.entries = map[idemKey]idemEntry{}
	}
	m.entries[k] = idemEntry{token: token, expires: now.Add(ttl)}
	return workflow.IdempotencyRecord{Token: token}, true, nil
}

// SaveIdempotency replaces token's claim with a copy of a.
func (s *Store) SaveIdempotency(ctx context.Context, userID, key, token string, a workflow.IdempotentAnswer, window time.Duration) (err error) {
	defer workflow.Wrap(&err, "memstore.SaveIdempotency(%q)", userID)
	if err := workflow.CheckIdempotencyArgs(ctx, userID, key, token, window); err != nil {
		return err
	}
	m := &s.idem
	m.mu.Lock()
	defer m.mu.Unlock()
	now := s.now()
	k := idemKey{userID, key}
	e, ok := m.entries[k]
	if !ok || !now.Before(e.expires) || e.answer != nil || e.token != token {
		return workflow.Errorf(workflow.KindConflict, "the claim on this idempotency key is no longer held")
	}
	m.entries[k] = idemEntry{token: token, answer: copyOf(&a), expires: now.Add(window)}
	return nil
}

// ReleaseIdempotency drops token's claim, if it still holds it.
func (s *Store) ReleaseIdempotency(ctx context.Context, userID, key, token string) (err error) {
	defer workflow.Wrap(&err, "memstore.ReleaseIdempotency(%q)", userID)
	if err := workflow.CheckIdempotencyArgs(ctx, userID, key, token, time.Second); err != nil {
		return err
	}
	m := &s.idem
	m.mu.Lock()
	defer m.mu.Unlock()
	k := idemKey{userID, key}
	if e, ok := m.entries[k]; ok && e.answer == nil && e.token == token {
		delete(m.entries, k)
	}
	return nil
}

// sweep drops expired entries, at most once per idemSweepEvery.
func (m *idempotencies) sweep(now time.Time) {
	if now.Sub(m.swept) < idemSweepEvery {
		return
	}
	m.swept = now
	maps.DeleteFunc(m.entries, func(_ idemKey, e idemEntry) bool { return !now.Before(e.expires) })
}
