package enginetest

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twostep/twostep/workflow"
)

// ErrDead is what every call of a DyingStore answers once it died.
var ErrDead = workflow.Errorf(workflow.KindUnavailable, "instance crashed")

// DyingStore wraps a Store the way a crashing instance sees it: after its
// round runner made killAfter step commits (commits of an existing
// workflow; <= 0: never), or when Kill is called, every call the runner
// makes fails with ErrDead. Another engine on the wrapped store then takes
// the round over. It is safe for concurrent use.
type DyingStore struct {
	workflow.Store
	// mu makes the commit that kills the store and its death one step:
	// commits hold it, the other calls read-hold it, so none slips in
	// between (a crashed process does nothing after its last commit).
	mu        sync.RWMutex
	killAfter int
	commits   atomic.Int32
	dead      atomic.Bool
	once      sync.Once
	died      chan struct{}
}

// NewDyingStore wraps s, dying after killAfter step commits.
func NewDyingStore(s workflow.Store, killAfter int) *DyingStore {
	return &DyingStore{Store: s, killAfter: killAfter, died: make(chan struct{})}
}

// Kill makes the store die now.
func (s *DyingStore) Kill() {
	s.dead.Store(true)
	s.once.Do(func() { close(s.died) })
}

// Dead reports whether the store has died.
func (s *DyingStore) Dead() bool { return s.dead.Load() }

// Died is closed when the store dies.
func (s *DyingStore) Died() <-chan struct{} { return s.died }

// Commit commits through the wrapped store until the store dies.
func (s *DyingStore) Commit(ctx context.Context, c workflow.Commit) (*workflow.Workflow, []workflow.Message, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead.Load() {
		return nil, nil, ErrDead
	}
	wf, msgs, err := s.Store.Commit(ctx, c)
	if err == nil && c.ExpectedVersion != 0 && int(s.commits.Add(1)) == s.killAfter {
		s.Kill()
	}
	return wf, msgs, err
}

// GetWorkflow reads through the wrapped store until the store dies.
func (s *DyingStore) GetWorkflow(ctx context.Context, id string) (*workflow.Workflow, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.dead.Load() {
		return nil, ErrDead
	}
	return s.Store.GetWorkflow(ctx, id)
}

// AppendTrace appends through the wrapped store until the store dies.
func (s *DyingStore) AppendTrace(ctx context.Context, t workflow.Trace) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.dead.Load() {
		return ErrDead
	}
	return s.Store.AppendTrace(ctx, t)
}

// ClaimRound claims through the wrapped store until the store dies.
func (s *DyingStore) ClaimRound(ctx context.Context, id, owner string, ttl time.Duration) (int64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.dead.Load() {
		return 0, ErrDead
	}
	return s.Store.ClaimRound(ctx, id, owner, ttl)
}

// ClaimRoundLoad claims and reads through the wrapped store (in one step
// when it can) until the store dies.
func (s *DyingStore) ClaimRoundLoad(ctx context.Context, id, owner string, ttl time.Duration) (workflow.RoundClaim, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.dead.Load() {
		return workflow.RoundClaim{}, ErrDead
	}
	return workflow.ClaimRoundLoad(ctx, s.Store, id, owner, ttl)
}

// ReleaseRound releases through the wrapped store until the store dies.
func (s *DyingStore) ReleaseRound(ctx context.Context, id, owner string) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.dead.Load() {
		return ErrDead
	}
	return s.Store.ReleaseRound(ctx, id, owner)
}
