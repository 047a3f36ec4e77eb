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

// outageStore fails the next commitsDown step commits and tracesDown trace
// writes with KindUnavailable, as a stalled Redis does, and remembers
// whether a commit ever wrote status failed.
type outageStore struct {
	workflow.Store
	commitsDown, tracesDown atomic.Int32
	refused, wroteFailed    atomic.Bool
}

var errOutage = workflow.Errorf(workflow.KindUnavailable, "redis is unavailable")

func (s *outageStore) Commit(ctx context.Context, c workflow.Commit) (*workflow.Workflow, []workflow.Message, error) {
	if c.ExpectedVersion > 0 && s.commitsDown.Add(-1) >= 0 {
		s.refused.Store(true)
		return nil, nil, errOutage
	}
	if c.Workflow.Status == workflow.StatusFailed {
		s.wroteFailed.Store(true)
	}
	return s.Store.Commit(ctx, c)
}

func (s *outageStore) AppendTrace(ctx context.Context, t workflow.Trace) error {
	if s.tracesDown.Add(-1) >= 0 {
		return errOutage
	}
	return s.Store.AppendTrace(ctx, t)
}

// A commit that meets a store outage is retried with the finished phase
// and its trace kept in memory: the round completes, its one model call is
// not repeated, its trace is stored (with the commit), and nothing ever
// says failed.
func TestStoreOutageIsRetriedNotFailed(t *testing.T) {
	t.Parallel()
	store := &outageStore{Store: memstore.New()}
	store.commitsDown.Store(4)
	var calls atomic.Int32
	model := workflow.ModelFunc(func(context.Context, workflow.ModelRequest) (workflow.ModelResponse, error) {
		calls.Add(1)
		return workflow.ModelResponse{Text: "{}"}, nil
	})
	e := newEngine(t, engine.Config{}, store, model, callThenComplete)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wf, err := e.Create(ctx, engine.NewWorkflow{UserID: "alice", Prompt: "p"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.Wait(ctx, wf.ID)
	if err != nil || got.Status != workflow.StatusCompleted || got.StopReason != workflow.StopCompleted {
		t.Fatalf("round ended %+v (%v), want completed", got, err)
	}
	if !store.refused.Load() || store.wroteFailed.Load() {
		t.Errorf("outage seen %v, failed written %v; want the outage seen and never failed",
			store.refused.Load(), store.wroteFailed.Load())
	}
	if n := calls.Load(); n != 1 || got.Stats.LLMCalls != 1 {
		t.Errorf("%d model calls, stats.llmCalls %d; want the one call kept through the outage", n, got.Stats.LLMCalls)
	}
	if traces, err := store.Traces(ctx, wf.ID); err != nil || len(traces) != 1 {
		t.Errorf("traces %d (%v), want the model call's trace stored after the outage", len(traces), err)
	}
}

// A store outage met inside a step (a read the mode makes) leaves the round
// running instead of failing it; the recovery scan resumes it once the
// store answers again.
func TestStoreOutageInsideAStepLeavesTheRoundRunning(t *testing.T) {
	t.Parallel()
	var down atomic.Int32
	down.Store(3)
	step := func(ctx context.Context, run workflow.Run) error {
		if down.Add(-1) >= 0 {
			return workflow.Errorf(workflow.KindUnavailable, "redis is unavailable")
		}
		return callThenComplete(ctx, run)
	}
	store := &outageStore{Store: memstore.New()}
	e := newEngine(t, engine.Config{}, store, workflow.ModelFunc(
		func(context.Context, workflow.ModelRequest) (workflow.ModelResponse, error) {
			return workflow.ModelResponse{Text: "{}"}, nil
		}), step)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wf, err := e.Create(ctx, engine.NewWorkflow{UserID: "alice", Prompt: "p"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.Wait(ctx, wf.ID)
	if err != nil || got.Status != workflow.StatusCompleted || store.wroteFailed.Load() {
		t.Fatalf("round ended %+v (%v), failed written %v; want completed, never failed", got, err, store.wroteFailed.Load())
	}
	if down.Load() >= 0 {
		t.Errorf("the step ran only %d times; the outage was not met", 3-down.Load())
	}
}
