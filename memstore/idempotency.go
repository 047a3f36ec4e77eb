package memstore

import (
	"context"
	"sync"
	"time"

	"github.com/twostep/twostep/workflow"
)

var _ workflow.IdempotencyStore = (*Store)(nil)

// idemSweepEvery is how often a claim drops the expired entries.
const idemSweepEvery = time.Minute

// idempotencies holds the Idempotency-Key entries, under a lock of their
// own: they share nothing with the workflows. kept lists each user's kept
// answers with what they count (workflow.IdempotentAnswer.Size), for the
// user's bound.
type idempotencies struct {
	mu      sync.Mutex
	entries map[idemKey]idemEntry
	kept    map[string]*idemUser
	swept   time.Time
}

type idemKey struct{ user, key string }

// idemEntry is a claim (answer nil) or a kept answer, until expires.
type idemEntry struct {
	token   string
	answer  *workflow.IdempotentAnswer
	size    int64
	expires time.Time
}

// idemUser is one user's kept answers: their keys and total size.
type idemUser struct {
	keys  map[string]struct{}
	bytes int64
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
	m.drop(k)
	if m.entries == nil {
		m.entries = map[idemKey]idemEntry{}
	}
	m.entries[k] = idemEntry{token: token, expires: now.Add(ttl)}
	return workflow.IdempotencyRecord{Token: token}, true, nil
}

// SaveIdempotency replaces token's claim with a copy of a, then drops the
// user's answers that expire first while they pass keep.UserBytes.
func (s *Store) SaveIdempotency(ctx context.Context, userID, key, token string, a workflow.IdempotentAnswer, keep workflow.IdempotencyKeep) (err error) {
	defer workflow.Wrap(&err, "memstore.SaveIdempotency(%q)", userID)
	if err := workflow.CheckIdempotencyArgs(ctx, userID, key, token, keep.Window); err != nil {
		return err
	}
	size := a.Size()
	if keep.UserBytes > 0 && size > keep.UserBytes {
		return workflow.Errorf(workflow.KindInvalid, "an answer of %d bytes passes the %d bytes kept per user", size, keep.UserBytes)
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
	m.entries[k] = idemEntry{token: token, answer: copyOf(&a), size: size, expires: now.Add(keep.Window)}
	u := m.user(userID)
	u.keys[key] = struct{}{}
	u.bytes += size
	for keep.UserBytes > 0 && u.bytes > keep.UserBytes {
		m.drop(m.firstToExpire(userID, u))
	}
	return nil
}

// user returns userID's kept answers, made when it has none.
func (m *idempotencies) user(userID string) *idemUser {
	if m.kept == nil {
		m.kept = map[string]*idemUser{}
	}
	u := m.kept[userID]
	if u == nil {
		u = &idemUser{keys: map[string]struct{}{}}
		m.kept[userID] = u
	}
	return u
}

// firstToExpire returns the key of u's kept answer that expires first.
func (m *idempotencies) firstToExpire(userID string, u *idemUser) idemKey {
	var first idemKey
	var at time.Time
	for key := range u.keys {
		k := idemKey{userID, key}
		if e := m.entries[k]; first.key == "" || e.expires.Before(at) {
			first, at = k, e.expires
		}
	}
	return first
}

// drop deletes k's entry and takes a kept answer out of its user's total.
func (m *idempotencies) drop(k idemKey) {
	e, ok := m.entries[k]
	if !ok {
		return
	}
	delete(m.entries, k)
	if e.answer == nil {
		return
	}
	u := m.kept[k.user]
	delete(u.keys, k.key)
	if u.bytes -= e.size; len(u.keys) == 0 {
		delete(m.kept, k.user)
	}
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
	for k, e := range m.entries {
		if !now.Before(e.expires) {
			m.drop(k)
		}
	}
}
