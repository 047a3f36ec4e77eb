package workflow_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

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
	e := newEngine(t, workflow.EngineConfig{InstanceID: "here"}, store, model, callThenComplete)
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
