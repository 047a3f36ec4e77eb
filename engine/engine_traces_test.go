package engine_test

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/workflow"
)

// traceWrites is a Store that notes how traces reach it: how many each
// commit carried and how many were appended on their own.
type traceWrites struct {
	workflow.Store
	mu        sync.Mutex
	committed []int // traces per commit with ExpectedVersion > 0
	appended  int
}

func (s *traceWrites) Commit(ctx context.Context, c workflow.Commit) (*workflow.Workflow, []workflow.Message, error) {
	wf, msgs, err := s.Store.Commit(ctx, c)
	if err == nil && c.ExpectedVersion > 0 {
		s.mu.Lock()
		s.committed = append(s.committed, len(c.Traces))
		s.mu.Unlock()
	}
	return wf, msgs, err
}

func (s *traceWrites) AppendTrace(ctx context.Context, t workflow.Trace) error {
	s.mu.Lock()
	s.appended++
	s.mu.Unlock()
	return s.Store.AppendTrace(ctx, t)
}

// The traces of a phase's model calls are stored by the commit of that
// phase, in call order, and never written on their own while the run
// commits its phases.
func TestTracesRideThePhaseCommit(t *testing.T) {
	t.Parallel()
	store := &traceWrites{Store: memstore.New()}
	step := func(ctx context.Context, run workflow.Run) error {
		if run.Workflow().Checkpoint.Phase == workflow.PhaseSelect {
			for attempt := 1; attempt <= 2; attempt++ {
				if _, err := run.Generate(ctx, workflow.ModelCall{Stage: workflow.StageOne, Attempt: attempt}); err != nil {
					return err
				}
			}
			return run.Checkpoint(ctx, workflow.Checkpoint{Phase: workflow.PhaseParameterize})
		}
		return callThenComplete(ctx, run)
	}
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
	if got, err := e.Wait(ctx, wf.ID); err != nil || got.Status != workflow.StatusCompleted {
		t.Fatalf("round ended %+v (%v), want completed", got, err)
	}
	traces, err := store.Traces(ctx, wf.ID)
	if err != nil {
		t.Fatal(err)
	}
	var attempts []int
	for _, tr := range traces {
		attempts = append(attempts, tr.Attempt)
	}
	store.mu.Lock()
	defer store.mu.Unlock()
	if len(store.committed) != 2 || store.committed[0] != 2 || store.committed[1] != 1 || store.appended != 0 {
		t.Errorf("traces per commit %v, appended alone %d; want [2 1] and 0", store.committed, store.appended)
	}
	if len(attempts) != 3 || attempts[0] != 1 || attempts[1] != 2 || attempts[2] != 1 {
		t.Errorf("stored trace attempts %v, want [1 2 1] (call order)", attempts)
	}
}

// A run that ends without committing its last call's phase — here a store
// outage met inside the step leaves the round for recovery — still stores
// that call's trace, retried through the outage; the resumed run's trace
// follows it.
func TestTraceWithoutACommitIsStoredWhenTheRunEnds(t *testing.T) {
	t.Parallel()
	store := &outageStore{Store: memstore.New()}
	store.tracesDown.Store(2)
	var runs atomic.Int32
	step := func(ctx context.Context, run workflow.Run) error {
		if runs.Add(1) == 1 {
			if _, err := run.Generate(ctx, workflow.ModelCall{Stage: workflow.StageOne, Attempt: 1, Template: "left"}); err != nil {
				return err
			}
			return workflow.Errorf(workflow.KindUnavailable, "redis is unavailable")
		}
		return callThenComplete(ctx, run)
	}
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
	if got, err := e.Wait(ctx, wf.ID); err != nil || got.Status != workflow.StatusCompleted {
		t.Fatalf("round ended %+v (%v), want completed", got, err)
	}
	traces, err := store.Traces(ctx, wf.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(traces) != 2 || traces[0].Template != "left" || traces[1].Template != "" {
		t.Errorf("traces %+v; want the left run's call, then the resumed run's", traces)
	}
	if store.tracesDown.Load() >= 0 {
		t.Errorf("the trace write met %d failures, want the outage of 2 met", 2-store.tracesDown.Load())
	}
}

// A trace the store cannot encode (its parse outcome is not JSON) never
// fails the phase: the commit is made again without it and the round
// goes on.
func TestUnstorableTraceDoesNotFailThePhase(t *testing.T) {
	t.Parallel()
	store := &traceWrites{Store: memstore.New()}
	step := func(ctx context.Context, run workflow.Run) error {
		_, err := run.Generate(ctx, workflow.ModelCall{Stage: workflow.StageOne, Attempt: 1,
			Check: func(string) (json.RawMessage, string) { return json.RawMessage("{not json"), "" }})
		if err != nil {
			return err
		}
		return run.CommitStep(ctx, workflow.StepResult{
			Messages: []workflow.Message{{ID: workflow.NewID(workflow.PrefixMessage), Role: workflow.RoleAssistant, Text: "done"}},
			End:      &workflow.RoundEnd{Status: workflow.StatusCompleted, Reason: workflow.StopCompleted},
		})
	}
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
	if err != nil || got.Status != workflow.StatusCompleted || got.Stats.LLMCalls != 1 {
		t.Fatalf("round ended %+v (%v), want completed with its one call counted", got, err)
	}
	store.mu.Lock()
	defer store.mu.Unlock()
	if len(store.committed) != 1 || store.committed[0] != 0 {
		t.Errorf("traces per applied commit %v, want [0] (the step committed without its trace)", store.committed)
	}
}

// The provider's cache usage reaches the trace of each call (its own model
// calls and an action's) and the stage's stats (DESIGN §10.1).
func TestCachedTokensReachTracesAndStats(t *testing.T) {
	t.Parallel()
	store := memstore.New()
	step := func(ctx context.Context, run workflow.Run) error {
		if _, err := run.Generate(ctx, workflow.ModelCall{Stage: workflow.StageOne, Attempt: 1}); err != nil {
			return err
		}
		run.RecordActionCalls(ctx, []workflow.ActionModelCall{{Template: "ai.process", PromptTokens: 50, CachedTokens: 20, CacheWriteTokens: 3}})
		return run.CommitStep(ctx, workflow.StepResult{
			Messages: []workflow.Message{{ID: workflow.NewID(workflow.PrefixMessage), Role: workflow.RoleAssistant, Text: "done"}},
			End:      &workflow.RoundEnd{Status: workflow.StatusCompleted, Reason: workflow.StopCompleted},
		})
	}
	e := newEngine(t, engine.Config{}, store, workflow.ModelFunc(
		func(context.Context, workflow.ModelRequest) (workflow.ModelResponse, error) {
			return workflow.ModelResponse{Text: "{}", PromptTokens: 2000, CompletionTokens: 9, CachedTokens: 1536, CacheWriteTokens: 256}, nil
		}), step)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wf, err := e.Create(ctx, engine.NewWorkflow{UserID: "alice", Prompt: "p"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.Wait(ctx, wf.ID)
	if err != nil || got.Status != workflow.StatusCompleted {
		t.Fatalf("round ended %+v (%v), want completed", got, err)
	}
	if s := got.Stats.ByStage.Get(workflow.StageOne); s.CachedTokens != 1536 || s.PromptTokens != 2000 {
		t.Errorf("stats.byStage.stage1 = %+v, want 1536 cached of 2000", s)
	}
	if s := got.Stats.ByStage.Get(workflow.StageAction); s.CachedTokens != 20 {
		t.Errorf("stats.byStage.action = %+v, want 20 cached", s)
	}
	traces, err := store.Traces(ctx, wf.ID)
	if err != nil {
		t.Fatal(err)
	}
	type usage struct{ cached, written int }
	want := map[workflow.Stage]usage{workflow.StageOne: {1536, 256}, workflow.StageAction: {20, 3}}
	if len(traces) != len(want) {
		t.Fatalf("%d traces, want %d", len(traces), len(want))
	}
	for _, tr := range traces {
		if g := (usage{tr.CachedTokens, tr.CacheWriteTokens}); g != want[tr.Stage] {
			t.Errorf("%s trace: cached, written = %v, want %v", tr.Stage, g, want[tr.Stage])
		}
	}
}
