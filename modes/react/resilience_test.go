package react_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/workflow"
)

// blockAt returns a model that answers from replies but blocks (until its
// context is cancelled) on call number at; entered is closed when that call
// starts and returned once it has returned (and been recorded in rec).
func blockAt(at int, replies []string) (m workflow.Model, rec *scripted.Model, entered, returned chan struct{}) {
	entered, returned = make(chan struct{}), make(chan struct{})
	script := scripted.New(replies...)
	rec = &scripted.Model{Reply: func(n int, req workflow.ModelRequest) (string, error) {
		if n == at {
			close(entered)
			return "", scripted.ErrBlock
		}
		if n > at {
			n--
		}
		return script.Reply(n, req)
	}}
	var calls atomic.Int32
	m = workflow.ModelFunc(func(ctx context.Context, req workflow.ModelRequest) (workflow.ModelResponse, error) {
		n := int(calls.Add(1)) - 1
		resp, err := rec.Generate(ctx, req)
		if n == at {
			close(returned)
		}
		return resp, err
	})
	return m, rec, entered, returned
}

func TestStopCancelsTheInFlightCallThenResume(t *testing.T) {
	t.Parallel()
	stopThenResume(t, func(testing.TB) workflow.Store { return newStore() })
}

// stopThenResume stops a round blocked in a model call, from the same and
// from another instance sharing the store, then resumes it.
func stopThenResume(t *testing.T, newShared func(testing.TB) workflow.Store) {
	tests := []struct {
		name   string
		remote bool
	}{{"same instance", false}, {"from another instance", true}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			store, reg := newShared(t), enginetest.NewRegistry()
			m, model, entered, returned := blockAt(2, replies(enginetest.Echoes("a"), enginetest.Echoes("b"), enginetest.Completes("done")))
			e1 := startEngine(t, testConfig("one"), store, m, reg)
			stopper := e1
			if tc.remote {
				// An instance that only serves the HTTP request: not started, so
				// it cannot run the round itself after the resume.
				var err error
				stopper, err = enginetest.NewEngine(testConfig("two"), store, scripted.New(), reg,
					map[workflow.ModeName]workflow.Mode{workflow.ModeReact: newMode(t)})
				if err != nil {
					t.Fatal(err)
				}
			}
			wf := create(t, e1, "echo", 5)
			<-entered
			stopped, err := stopper.Stop(context.Background(), "alice", wf.ID)
			if err != nil || stopped.Status != workflow.StatusStopped || stopped.StopReason != workflow.StopStopped {
				t.Fatalf("Stop = %+v, %v; want stopped", stopped, err)
			}
			select {
			case <-returned:
			case <-time.After(5 * time.Second):
				t.Fatal("the in-flight model call was not cancelled")
			}
			if c := model.Calls()[2]; !errors.Is(c.Err, context.Canceled) {
				t.Errorf("blocked call ended with %v, want context.Canceled", c.Err)
			}
			if _, err := stopper.Stop(context.Background(), "alice", wf.ID); workflow.KindOf(err) != workflow.KindConflict {
				t.Errorf("second Stop: %v, want KindConflict", err)
			}
			if _, err := e1.Resume(context.Background(), "alice", wf.ID); err != nil {
				t.Fatalf("Resume: %v", err)
			}
			got := wait(t, e1, wf.ID)
			if got.Status != workflow.StatusCompleted {
				t.Fatalf("after resume: %s/%s (%s), want completed", got.Status, got.StopReason, got.Error)
			}
			// Step 2's Stage 1 was cancelled, so it runs again; nothing else does.
			want := []workflow.Stage{s1, s2, s1, s1, s2, s1, s2}
			if diff := cmp.Diff(want, stages(model.Calls())); diff != "" {
				t.Errorf("model calls (-want +got):\n%s", diff)
			}
		})
	}
}

func TestModelOutageThenResumeFromCheckpoint(t *testing.T) {
	t.Parallel()
	script := scripted.New(replies(enginetest.Echoes("a"), enginetest.Echoes("b"), enginetest.Completes("done"))...)
	var failed atomic.Bool
	model := &scripted.Model{Reply: func(n int, req workflow.ModelRequest) (string, error) {
		if n == 3 && failed.CompareAndSwap(false, true) { // step 2's Stage 2, once
			return "", workflow.Errorf(workflow.KindUnavailable, "provider answered 503 three times")
		}
		if failed.Load() {
			n--
		}
		return script.Reply(n, req)
	}}
	store := newStore()
	e := startEngine(t, testConfig("a"), store, model, enginetest.NewRegistry())
	wf := wait(t, e, create(t, e, "echo", 5).ID)
	if wf.Status != workflow.StatusFailed || wf.StopReason != workflow.StopLLMError || wf.Error == "" {
		t.Fatalf("ended %s/%s (%q), want failed/llm_error with an explanation", wf.Status, wf.StopReason, wf.Error)
	}
	if cp := wf.Checkpoint; cp == nil || cp.Phase != workflow.PhaseParameterize || wf.Step != 2 {
		t.Fatalf("checkpoint %+v at step %d, want parameterize at step 2", cp, wf.Step)
	}
	if _, err := e.Resume(context.Background(), "alice", wf.ID); err != nil {
		t.Fatal(err)
	}
	got := wait(t, e, wf.ID)
	if got.Status != workflow.StatusCompleted || got.StopReason != workflow.StopCompleted {
		t.Fatalf("after resume %s/%s, want completed", got.Status, got.StopReason)
	}
	want := []workflow.Stage{s1, s2, s1, s2, s2, s1, s2} // the failed Stage 2 repeats, not Stage 1
	if diff := cmp.Diff(want, stages(model.Calls())); diff != "" {
		t.Errorf("model calls (-want +got):\n%s", diff)
	}
}

// Shutdown leaves the round running and releases its lease, so a new
// instance resumes it at once (the lease TTL here is far too long to
// expire within the test).
func TestShutdownHandsTheRoundOver(t *testing.T) {
	t.Parallel()
	cfg := func(id string) engine.Config {
		c := testConfig(id)
		c.LeaseTTL = time.Minute
		c.ShutdownGrace = 50 * time.Millisecond // the blocked model call outlasts it
		return c
	}
	full := replies(enginetest.Echoes("a"), enginetest.Echoes("b"), enginetest.Completes("done"))
	script := &sharedScript{replies: full}
	var stopping atomic.Bool
	entered := make(chan struct{})
	var once sync.Once
	store, reg := newStore(), enginetest.NewRegistry()
	m1 := script.model(func() bool {
		if len(script.stages()) == 2 {
			stopping.Store(true)
			once.Do(func() { close(entered) })
		}
		return stopping.Load()
	})
	e1, err := enginetest.NewEngine(cfg("one"), store, m1, reg, map[workflow.ModeName]workflow.Mode{workflow.ModeReact: newMode(t)})
	if err != nil {
		t.Fatal(err)
	}
	e1.Start(context.Background())
	wf := create(t, e1, "echo", 5)
	<-entered
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e1.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	mid, _ := store.GetWorkflow(ctx, wf.ID)
	if mid.Status != workflow.StatusRunning || mid.Checkpoint.Phase != workflow.PhaseSelect || mid.Step != 2 {
		t.Fatalf("after shutdown: %s at step %d phase %+v, want running at step 2, select", mid.Status, mid.Step, mid.Checkpoint)
	}
	e2 := startEngine(t, cfg("two"), store, script.model(nil), reg)
	got := wait(t, e2, wf.ID)
	if got.Status != workflow.StatusCompleted {
		t.Fatalf("ended %s (%s), want completed", got.Status, got.Error)
	}
	if diff := cmp.Diff([]workflow.Stage{s1, s2, s1, s2, s1, s2}, script.stages()); diff != "" {
		t.Errorf("finished model calls (-want +got):\n%s", diff)
	}
}
