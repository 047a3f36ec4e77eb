package memstore

import (
	"context"
	"time"

	"github.com/twostep/twostep/workflow"
)

var _ workflow.UsageStore = (*Store)(nil)

// usageKey names one user's usage counter of one period.
type usageKey struct{ user, period string }

// usageHold is one reservation: its tokens and when it stops counting.
type usageHold struct {
	tokens  int64
	expires time.Time
}

// usageEntry is a counter, its live holds and when it expires. Usage's
// Reserved is the sum of holds.
type usageEntry struct {
	workflow.Usage
	holds   map[string]usageHold
	expires time.Time
}

// full reports whether tokens leave no room under limit or micros pass
// it (zero fields: no limit).
func full(tokens, micros int64, limit workflow.Usage) bool {
	return (limit.Tokens > 0 && tokens >= limit.Tokens) || (limit.Micros > 0 && micros > limit.Micros)
}

// counter returns the live counter of k with the holds expired at now
// dropped, under s.usageMu.
func (s *Store) counter(k usageKey, now time.Time) usageEntry {
	e, ok := s.usage[k]
	if !ok || (!e.expires.IsZero() && !s.now().Before(e.expires)) {
		return usageEntry{holds: map[string]usageHold{}}
	}
	for id, h := range e.holds {
		if !now.Before(h.expires) {
			delete(e.holds, id)
			e.Reserved -= h.tokens
		}
	}
	return e
}

// ReserveUsage checks and records under one lock.
func (s *Store) ReserveUsage(ctx context.Context, userID, period string, hold workflow.UsageHold, limit workflow.Usage, ttl time.Duration) (workflow.Usage, bool, error) {
	if err := checkID(ctx, "user id", userID); err != nil {
		return workflow.Usage{}, false, err
	}
	s.usageMu.Lock()
	defer s.usageMu.Unlock()
	k := usageKey{userID, period}
	e := s.counter(k, hold.Now)
	e.expires = s.now().Add(ttl)
	granted := false
	switch {
	case full(e.Tokens, e.Micros, limit):
		e.Spent = true
	case !full(e.Tokens+e.Reserved, e.Micros, limit):
		if old, ok := e.holds[hold.ID]; ok { // the same hold again: replaced
			e.Reserved -= old.tokens
		}
		e.holds[hold.ID] = usageHold{tokens: hold.Tokens, expires: hold.Expires}
		e.Reserved += hold.Tokens
		granted = true
	}
	s.usage[k] = e
	return e.Usage, granted, nil
}

// AddUsage settles under the same lock.
func (s *Store) AddUsage(ctx context.Context, userID, period, holdID string, used workflow.Usage, now time.Time, ttl time.Duration) (workflow.Usage, error) {
	if err := checkID(ctx, "user id", userID); err != nil {
		return workflow.Usage{}, err
	}
	s.usageMu.Lock()
	defer s.usageMu.Unlock()
	k := usageKey{userID, period}
	e := s.counter(k, now)
	if h, ok := e.holds[holdID]; ok {
		delete(e.holds, holdID)
		e.Reserved -= h.tokens
	}
	e.Tokens, e.Micros = max(e.Tokens+used.Tokens, 0), max(e.Micros+used.Micros, 0)
	e.expires = s.now().Add(ttl)
	s.usage[k] = e
	return e.Usage, nil
}
