package workflow_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/workflow"
)

// A round whose lease another instance holds is left alone; once that
// lease is released, the recovery loop runs it here.
func TestRoundLeasedElsewhereWaitsForTheLease(t *testing.T) {
	t.Parallel()
	store := memstore.New()
	var calls atomic.Int32
	model := workflow.ModelFunc(func(context.Context, workflow.ModelRequest) (workflow.ModelResponse, error) {
		calls.Add(1)
		return workflow.ModelResponse{Text: "{}"}, nil
	})
	e := newEngine(t, workflow.EngineConfig{InstanceID: "here"}, store, model, callThenComplete)
	ctx := context.Background()
	// Instance "other" created the round and holds its lease.
	wf := &workflow.Workflow{ID: workflow.NewID(workflow.PrefixWorkflow), UserID: "alice", Mode: workflow.ModeReact,
		Status: workflow.StatusRunning, Round: 1, Step: 1, MaxSteps: 3, Checkpoint: &workflow.Checkpoint{Phase: workflow.PhaseSelect}}
	if _, _, err := store.Commit(ctx, workflow.Commit{Workflow: wf, Messages: []workflow.Message{{
		ID: workflow.NewID(workflow.PrefixMessage), Round: 1, Role: workflow.RoleUser, Text: "p"}}}); err != nil {
		t.Fatal(err)
	}
	if ok, err := store.ClaimRound(ctx, wf.ID, "other", time.Hour); !ok || err != nil {
		t.Fatalf("ClaimRound: %v %v", ok, err)
	}
	time.Sleep(200 * time.Millisecond) // several recovery scans (interval 50ms)
	if n := calls.Load(); n != 0 {
		t.Fatalf("%d model calls while another instance held the lease", n)
	}
	if err := store.ReleaseRound(ctx, wf.ID, "other"); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	got, err := e.Wait(wctx, wf.ID)
	if err != nil || got.Status != workflow.StatusCompleted || calls.Load() != 1 {
		t.Fatalf("after release: %+v, %v, %d calls; want completed with one call", got, err, calls.Load())
	}
}
