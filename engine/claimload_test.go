package engine_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/workflow"
)

// failingMessages is a store without RoundLoader whose Messages fails as
// an unreachable store does.
type failingMessages struct{ workflow.Store }

func (failingMessages) Messages(context.Context, string, int64, int) ([]workflow.Message, error) {
	return nil, workflow.Errorf(workflow.KindUnavailable, "store down")
}

// ClaimRoundLoad on a store without RoundLoader claims and then reads; a
// read that fails returns its error and releases the lease just taken,
// so another instance need not wait for it to expire.
func TestClaimRoundLoadReleasesTheLeaseWhenAReadFails(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := memstore.New()
	wf, _, err := store.Commit(ctx, workflow.Commit{Workflow: &workflow.Workflow{ID: workflow.NewID(workflow.PrefixWorkflow),
		UserID: "alice", Mode: workflow.ModeReact, Status: workflow.StatusRunning}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := workflow.ClaimRoundLoad(ctx, failingMessages{store}, wf.ID, "a", time.Hour)
	if workflow.KindOf(err) != workflow.KindUnavailable || c.Fence != 0 || c.Workflow != nil || c.Messages != nil {
		t.Fatalf("ClaimRoundLoad with a failing read = %d, %v, %d messages, %v; want 0, nil, none, unavailable", c.Fence, c.Workflow, len(c.Messages), err)
	}
	if fence, err := store.ClaimRound(ctx, wf.ID, "b", time.Hour); err != nil || fence != 2 {
		t.Fatalf("ClaimRound(b) after the failed load = %d, %v; want fence 2 (a's lease released)", fence, err)
	}
}

// loadingStore is a RoundLoader that counts its loads.
type loadingStore struct {
	workflow.Store
	loads atomic.Int32
}

func (s *loadingStore) ClaimRoundLoad(ctx context.Context, id, owner string, ttl time.Duration) (workflow.RoundClaim, error) {
	s.loads.Add(1)
	return workflow.ClaimRoundLoad(ctx, s.Store, id, owner, ttl)
}

// nopTracer opens spans that record nothing.
type nopTracer struct{}

func (nopTracer) Start(ctx context.Context, _ workflow.SpanStart) (context.Context, workflow.Span) {
	return ctx, nopSpan{}
}
func (nopTracer) TraceParent(context.Context) string { return "" }

type nopSpan struct{}

func (nopSpan) ModelReply(workflow.ModelResponse, string, string) {}
func (nopSpan) End(error)                                         {}

// TestRunsClaimWithTheStoresLoader: the engine starts a run with the
// store's one-step claim and read, traced or not (the span wrapper
// around the store forwards it).
func TestRunsClaimWithTheStoresLoader(t *testing.T) {
	t.Parallel()
	for name, tracer := range map[string]workflow.Tracer{"untraced": nil, "traced": nopTracer{}} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			store := &loadingStore{Store: memstore.New()}
			model := workflow.ModelFunc(func(context.Context, workflow.ModelRequest) (workflow.ModelResponse, error) {
				return workflow.ModelResponse{Text: "{}"}, nil
			})
			e := newEngine(t, engine.Config{Tracer: tracer}, store, model, callThenComplete)
			_, got := createAndWait(t, e)
			if got.Status != workflow.StatusCompleted || store.loads.Load() < 1 {
				t.Errorf("ended %s after %d loads, want completed through the store's loader", got.Status, store.loads.Load())
			}
		})
	}
}
