package engine_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/workflow"
)

// A run whose lease expired during its model call, and was taken over by
// another instance, writes nothing: its commit carries its fence, which
// the store refuses.
func TestRunPastItsLeaseWritesNothing(t *testing.T) {
	t.Parallel()
	var offset atomic.Int64 // the store's clock runs ahead by this much
	store := memstore.New(memstore.WithClock(func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }))
	ctx := context.Background()
	var calls atomic.Int32
	var id atomic.Value
	model := workflow.ModelFunc(func(context.Context, workflow.ModelRequest) (workflow.ModelResponse, error) {
		calls.Add(1)
		// This instance stalls past its lease; "other" takes the round.
		offset.Store(int64(time.Hour))
		if fence, err := store.ClaimRound(ctx, id.Load().(string), "other", 2*time.Hour); fence < 2 || err != nil {
			t.Errorf("takeover: fence %d, %v; want a fence above the first", fence, err)
		}
		return workflow.ModelResponse{Text: "{}"}, nil
	})
	e := newEngine(t, engine.Config{InstanceID: "here"}, store, model, callThenComplete)
	wf := &workflow.Workflow{ID: workflow.NewID(workflow.PrefixWorkflow), UserID: "alice", Mode: workflow.ModeReact,
		Status: workflow.StatusRunning, Round: 1, Step: 1, MaxSteps: 3, Checkpoint: &workflow.Checkpoint{Phase: workflow.PhaseSelect}}
	id.Store(wf.ID)
	stored, _, err := store.Commit(ctx, workflow.Commit{Workflow: wf, Messages: []workflow.Message{{
		ID: workflow.NewID(workflow.PrefixMessage), Round: 1, Role: workflow.RoleUser, Text: "p"}}})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for calls.Load() == 0 && time.Now().Before(deadline) { // the recovery loop picks it up
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // the run's commit, and several recovery scans
	got, err := e.Get(ctx, "alice", wf.ID)
	if err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 1 || got.Version != stored.Version || got.Status != workflow.StatusRunning {
		t.Errorf("after the takeover: %d model calls, version %d (want 1 call, version %d, running): %+v",
			calls.Load(), got.Version, stored.Version, got)
	}
}

// slowRenewals is a store whose lease renewals (every ClaimRound after the
// first) get no answer until release is closed, as when the store or this
// process is too slow for them; released is closed when the run released
// its lease (it has ended).
type slowRenewals struct {
	workflow.Store
	claims   atomic.Int32
	release  chan struct{}
	once     sync.Once
	released chan struct{}
}

func (s *slowRenewals) ClaimRound(ctx context.Context, id, owner string, ttl time.Duration) (int64, error) {
	if s.claims.Add(1) > 1 {
		select {
		case <-s.release:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	return s.Store.ClaimRound(ctx, id, owner, ttl)
}

func (s *slowRenewals) ReleaseRound(ctx context.Context, id, owner string) error {
	err := s.Store.ReleaseRound(ctx, id, owner)
	s.once.Do(func() { close(s.released) })
	return err
}

// A run whose lease ended by its own clock — its renewal got no answer for
// a whole LeaseTTL, while a model call took longer than that — makes no
// further model call and writes nothing: another instance may hold the
// round by then. (Before, the run went on until the watcher, stuck in
// that renewal, noticed.)
func TestRunCallsNoModelPastItsLease(t *testing.T) {
	t.Parallel()
	const ttl = 150 * time.Millisecond
	store := &slowRenewals{Store: memstore.New(), release: make(chan struct{}), released: make(chan struct{})}
	t.Cleanup(func() { close(store.release) })
	ctx := context.Background()
	var calls atomic.Int32
	model := workflow.ModelFunc(func(context.Context, workflow.ModelRequest) (workflow.ModelResponse, error) {
		if calls.Add(1) == 1 {
			time.Sleep(3 * ttl) // the reply was on its way: it arrives past the lease
		}
		return workflow.ModelResponse{Text: "{}"}, nil
	})
	twoCalls := func(ctx context.Context, run workflow.Run) error {
		for range 2 {
			if _, err := run.Generate(ctx, workflow.ModelCall{Stage: workflow.StageOne, Attempt: 1}); err != nil {
				return err
			}
		}
		return run.CommitStep(ctx, workflow.StepResult{
			Messages: []workflow.Message{{ID: workflow.NewID(workflow.PrefixMessage), Role: workflow.RoleAssistant, Text: "done"}},
			End:      &workflow.RoundEnd{Status: workflow.StatusCompleted, Reason: workflow.StopCompleted},
		})
	}
	wf := &workflow.Workflow{ID: workflow.NewID(workflow.PrefixWorkflow), UserID: "alice", Mode: workflow.ModeReact,
		Status: workflow.StatusRunning, Round: 1, Step: 1, MaxSteps: 3, Checkpoint: &workflow.Checkpoint{Phase: workflow.PhaseSelect}}
	stored, _, err := store.Commit(ctx, workflow.Commit{Workflow: wf, Messages: []workflow.Message{{
		ID: workflow.NewID(workflow.PrefixMessage), Round: 1, Role: workflow.RoleUser, Text: "p"}}})
	if err != nil {
		t.Fatal(err)
	}
	// The start-up scan finds the round; no later scan or reclaim runs it
	// again.
	e, err := engine.New(engine.Config{InstanceID: "here", LeaseTTL: ttl, PollInterval: 10 * time.Millisecond,
		RecoverInterval: time.Hour, ReclaimInterval: time.Hour, ShutdownGrace: 50 * time.Millisecond},
		store, model, enginetest.NewRegistry(), map[workflow.ModeName]workflow.Mode{workflow.ModeReact: stubMode{twoCalls}})
	if err != nil {
		t.Fatal(err)
	}
	e.Start(context.Background())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := e.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	select {
	case <-store.released:
	case <-time.After(10 * time.Second):
		t.Fatalf("the run never ended (%d model calls)", calls.Load())
	}
	got, err := store.GetWorkflow(ctx, wf.ID)
	if err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 1 || got.Version != stored.Version || got.Status != workflow.StatusRunning {
		t.Errorf("after the lease ended: %d model calls, version %d, status %s; want 1 call, version %d, running",
			calls.Load(), got.Version, got.Status, stored.Version)
	}
}

// frozenStore is a store that stops answering once frozen is set, as a
// stopped Redis does: ClaimRound and GetWorkflow then wait until their
// context ends, and record its deadline. The first ClaimRound (the run's
// claim) records when it was sent; released is closed when the run
// released its lease (it has ended).
type frozenStore struct {
	workflow.Store
	frozen   atomic.Bool
	mu       sync.Mutex
	claimAt  time.Time   // when the first claim was sent
	renewals []time.Time // each frozen renewal's deadline (zero: none)
	polls    []time.Time // each frozen status poll's deadline (zero: none)
	once     sync.Once
	released chan struct{}
}

func (s *frozenStore) wait(ctx context.Context, into *[]time.Time) error {
	d, _ := ctx.Deadline()
	s.mu.Lock()
	*into = append(*into, d)
	s.mu.Unlock()
	<-ctx.Done()
	return ctx.Err()
}

func (s *frozenStore) ClaimRound(ctx context.Context, id, owner string, ttl time.Duration) (int64, error) {
	if s.frozen.Load() {
		return 0, s.wait(ctx, &s.renewals)
	}
	s.mu.Lock()
	if s.claimAt.IsZero() {
		s.claimAt = time.Now()
	}
	s.mu.Unlock()
	return s.Store.ClaimRound(ctx, id, owner, ttl)
}

func (s *frozenStore) GetWorkflow(ctx context.Context, id string) (*workflow.Workflow, error) {
	if s.frozen.Load() {
		return nil, s.wait(ctx, &s.polls)
	}
	return s.Store.GetWorkflow(ctx, id)
}

func (s *frozenStore) ReleaseRound(ctx context.Context, id, owner string) error {
	err := s.Store.ReleaseRound(ctx, id, owner)
	s.once.Do(func() { close(s.released) })
	return err
}

// While the store is frozen, a run's lease renewals wait for their answer
// no longer than the lease lasts (each renewal's context ends at the
// lease's end by the run's own clock, which is no later than the store's),
// and its status polls end too: no store call of the watcher overruns the
// lease. (Before, they waited on the run's context, which has no
// deadline: with go-redis that meant its 5 s read timeout.)
func TestLeaseRenewalEndsWithTheLease(t *testing.T) {
	t.Parallel()
	const ttl = 300 * time.Millisecond
	store := &frozenStore{Store: memstore.New(), released: make(chan struct{})}
	ctx := context.Background()
	var calls atomic.Int32
	model := workflow.ModelFunc(func(ctx context.Context, _ workflow.ModelRequest) (workflow.ModelResponse, error) {
		calls.Add(1)
		store.frozen.Store(true) // the store stops answering during the call
		<-ctx.Done()             // the lease's end cancels the run
		return workflow.ModelResponse{}, ctx.Err()
	})
	wf := &workflow.Workflow{ID: workflow.NewID(workflow.PrefixWorkflow), UserID: "alice", Mode: workflow.ModeReact,
		Status: workflow.StatusRunning, Round: 1, Step: 1, MaxSteps: 3, Checkpoint: &workflow.Checkpoint{Phase: workflow.PhaseSelect}}
	if _, _, err := store.Commit(ctx, workflow.Commit{Workflow: wf, Messages: []workflow.Message{{
		ID: workflow.NewID(workflow.PrefixMessage), Round: 1, Role: workflow.RoleUser, Text: "p"}}}); err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(engine.Config{InstanceID: "here", LeaseTTL: ttl, PollInterval: 10 * time.Millisecond,
		RecoverInterval: time.Hour, ReclaimInterval: time.Hour, ShutdownGrace: 50 * time.Millisecond},
		store, model, enginetest.NewRegistry(), map[workflow.ModeName]workflow.Mode{workflow.ModeReact: stubMode{callThenComplete}})
	if err != nil {
		t.Fatal(err)
	}
	e.Start(context.Background())
	t.Cleanup(func() {
		store.frozen.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := e.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	select {
	case <-store.released:
	case <-time.After(10 * time.Second):
		t.Fatalf("the run never ended (%d model calls)", calls.Load())
	}
	store.mu.Lock()
	defer store.mu.Unlock()
	leaseEnd := store.claimAt.Add(ttl) // no renewal kept it: the claim's lease
	if len(store.renewals) == 0 {
		t.Fatalf("no renewal was tried while the store was frozen (%d polls): the test proved nothing", len(store.polls))
	}
	for i, d := range store.renewals {
		if d.IsZero() || d.After(leaseEnd) {
			t.Errorf("renewal %d waited until %v; want a deadline no later than the lease's end (%v after the claim)", i, deadlineText(d, store.claimAt), ttl)
		}
	}
	for i, d := range store.polls {
		if d.IsZero() {
			t.Errorf("status poll %d had no deadline", i)
		}
	}
	if calls.Load() != 1 {
		t.Errorf("%d model calls, want 1", calls.Load())
	}
}

// deadlineText shows deadline d relative to since ("none" when zero).
func deadlineText(d, since time.Time) string {
	if d.IsZero() {
		return "no deadline"
	}
	return d.Sub(since).String() + " after the claim"
}

// lateClaims is a store whose first ClaimRoundLoad answers late: after the
// claim ran, and before its reply arrives, takeover runs (the lease has
// expired by then, and another instance takes the round and commits).
type lateClaims struct {
	*memstore.Store
	once     sync.Once
	takeover func()
}

func (s *lateClaims) ClaimRoundLoad(ctx context.Context, id, owner string, ttl time.Duration) (workflow.RoundClaim, error) {
	c, err := s.Store.ClaimRoundLoad(ctx, id, owner, ttl)
	s.once.Do(s.takeover)
	return c, err
}

// A claim that succeeded, but whose reply came after its lease had ended
// (the process stalled, or the store was slow to answer), brings a view
// another instance may have moved past: the run makes no model call and
// writes nothing (its lease, counted from when the claim was sent, has
// ended by its own clock).
func TestLateClaimStartsNoModelCall(t *testing.T) {
	t.Parallel()
	const ttl = 150 * time.Millisecond
	ctx := context.Background()
	mem := memstore.New()
	wf := &workflow.Workflow{ID: workflow.NewID(workflow.PrefixWorkflow), UserID: "alice", Mode: workflow.ModeReact,
		Status: workflow.StatusRunning, Round: 1, Step: 1, MaxSteps: 3, Checkpoint: &workflow.Checkpoint{Phase: workflow.PhaseSelect}}
	if _, _, err := mem.Commit(ctx, workflow.Commit{Workflow: wf, Messages: []workflow.Message{{
		ID: workflow.NewID(workflow.PrefixMessage), Round: 1, Role: workflow.RoleUser, Text: "p"}}}); err != nil {
		t.Fatal(err)
	}
	var moved atomic.Pointer[workflow.Workflow] // other's commit
	store := &lateClaims{Store: mem, takeover: func() {
		time.Sleep(2 * ttl) // the claim's lease runs out before its reply arrives
		fence, err := mem.ClaimRound(ctx, wf.ID, "other", time.Hour)
		if err != nil || fence < 2 {
			t.Errorf("other's claim: fence %d, %v; want a newer fence", fence, err)
			return
		}
		cur, err := mem.GetWorkflow(ctx, wf.ID)
		if err != nil {
			t.Error(err)
			return
		}
		next := cur.Clone()
		next.Step = 2
		stored, _, err := mem.Commit(ctx, workflow.Commit{Workflow: next, ExpectedVersion: cur.Version, Fence: fence})
		if err != nil {
			t.Errorf("other's commit: %v", err)
			return
		}
		moved.Store(stored)
	}}
	var calls atomic.Int32
	model := workflow.ModelFunc(func(context.Context, workflow.ModelRequest) (workflow.ModelResponse, error) {
		calls.Add(1)
		return workflow.ModelResponse{Text: "{}"}, nil
	})
	e, err := engine.New(engine.Config{InstanceID: "here", LeaseTTL: ttl, PollInterval: 10 * time.Millisecond,
		RecoverInterval: time.Hour, ReclaimInterval: time.Hour, ShutdownGrace: 50 * time.Millisecond},
		store, model, enginetest.NewRegistry(), map[workflow.ModeName]workflow.Mode{workflow.ModeReact: stubMode{callThenComplete}})
	if err != nil {
		t.Fatal(err)
	}
	e.Start(ctx)
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if err := e.Shutdown(sctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	deadline := time.Now().Add(5 * time.Second)
	for moved.Load() == nil && time.Now().Before(deadline) { // the start-up scan claims it
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(4 * ttl) // what the stale run would do, it has done by now
	got, err := mem.GetWorkflow(ctx, wf.ID)
	if err != nil {
		t.Fatal(err)
	}
	if m := moved.Load(); m == nil || calls.Load() != 0 || got.Version != m.Version {
		t.Errorf("after a late claim: %d model calls, version %d; want none, and other's commit (%v)", calls.Load(), got.Version, m)
	}
}
