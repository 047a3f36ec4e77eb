package memstore

import (
	"context"
	"time"

	"github.com/twostep/twostep/workflow"
)

var _ workflow.UsageStore = (*Store)(nil)

// usageKey names one user's usage counter of one period.
type usageKey struct{ user, period string }

// usageEntry is a counter and when it expires.
type usageEntry struct {
	workflow.Usage
	expires time.Time
}

// within reports whether u stays within limit (zero fields: no limit).
func within(u, limit workflow.Usage) bool {
	return (limit.Tokens <= 0 || u.Tokens <= limit.Tokens) && (limit.Micros <= 0 || u.Micros <= limit.Micros)
}

// counter returns the live counter of k, under s.usageMu.
func (s *Store) counter(k usageKey) workflow.Usage {
	e, ok := s.usage[k]
	if !ok || (!e.expires.IsZero() && !s.now().Before(e.expires)) {
		return workflow.Usage{}
	}
	return e.Usage
}

// ReserveUsage checks and adds under one lock.
func (s *Store) ReserveUsage(ctx context.Context, userID, period string, add, limit workflow.Usage, ttl time.Duration) (workflow.Usage, bool, error) {
	if err := checkID(ctx, "user id", userID); err != nil {
		return workflow.Usage{}, false, err
	}
	s.usageMu.Lock()
	defer s.usageMu.Unlock()
	k := usageKey{userID, period}
	cur := s.counter(k)
	next := workflow.Usage{Tokens: cur.Tokens + add.Tokens, Micros: cur.Micros + add.Micros, Spent: cur.Spent}
	if !within(next, limit) {
		cur.Spent = true
		s.usage[k] = usageEntry{Usage: cur, expires: s.now().Add(ttl)}
		return cur, false, nil
	}
	s.usage[k] = usageEntry{Usage: next, expires: s.now().Add(ttl)}
	return next, true, nil
}

// AddUsage adds under the same lock.
func (s *Store) AddUsage(ctx context.Context, userID, period string, add workflow.Usage, ttl time.Duration) (workflow.Usage, error) {
	if err := checkID(ctx, "user id", userID); err != nil {
		return workflow.Usage{}, err
	}
	s.usageMu.Lock()
	defer s.usageMu.Unlock()
	k := usageKey{userID, period}
	cur := s.counter(k)
	next := workflow.Usage{Tokens: max(cur.Tokens+add.Tokens, 0), Micros: max(cur.Micros+add.Micros, 0), Spent: cur.Spent}
	s.usage[k] = usageEntry{Usage: next, expires: s.now().Add(ttl)}
	return next, nil
}
