package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/engine/enginetest"
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
	e := newEngine(t, engine.Config{InstanceID: "here"}, store, model, callThenComplete)
	ctx := context.Background()
	// Instance "other" created the round and holds its lease.
	wf := &workflow.Workflow{ID: workflow.NewID(workflow.PrefixWorkflow), UserID: "alice", Mode: workflow.ModeReact,
		Status: workflow.StatusRunning, Round: 1, Step: 1, MaxSteps: 3, Checkpoint: &workflow.Checkpoint{Phase: workflow.PhaseSelect}}
	if _, _, err := store.Commit(ctx, workflow.Commit{Workflow: wf, Messages: []workflow.Message{{
		ID: workflow.NewID(workflow.PrefixMessage), Round: 1, Role: workflow.RoleUser, Text: "p"}}}); err != nil {
		t.Fatal(err)
	}
	if fence, err := store.ClaimRound(ctx, wf.ID, "other", time.Hour); fence == 0 || err != nil {
		t.Fatalf("ClaimRound: %v %v", fence, err)
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

// A round left running in the store by an instance that died (its lease
// expired, nothing scheduled it here) is resumed by the recovery loop and
// logged as taken over with its fencing token and previous holder, whether
// it had progressed or died at its first step; a round queued with no
// lease ever taken (an API-only instance's) and a round created here are
// not logged.
func TestDeadInstancesRoundIsLoggedAsTakenOver(t *testing.T) {
	t.Parallel()
	store := memstore.New()
	ctx := context.Background()
	put := func(step int, holder string) *workflow.Workflow {
		t.Helper()
		wf := &workflow.Workflow{ID: workflow.NewID(workflow.PrefixWorkflow), UserID: "alice", Mode: workflow.ModeReact,
			Status: workflow.StatusRunning, Round: 1, Step: step, MaxSteps: 3, Checkpoint: &workflow.Checkpoint{Phase: workflow.PhaseSelect}}
		if _, _, err := store.Commit(ctx, workflow.Commit{Workflow: wf, Messages: []workflow.Message{{
			ID: workflow.NewID(workflow.PrefixMessage), Round: 1, Role: workflow.RoleUser, Text: "p"}}}); err != nil {
			t.Fatal(err)
		}
		if holder != "" {
			if fence, err := store.ClaimRound(ctx, wf.ID, holder, 30*time.Millisecond); fence == 0 || err != nil {
				t.Fatalf("ClaimRound: %v %v", fence, err)
			}
		}
		return wf
	}
	dead := put(2, "dead")      // died after a step
	deadFirst := put(1, "dead") // died during its first step
	queued := put(1, "")        // queued by an API-only instance
	time.Sleep(50 * time.Millisecond)
	var logs lockedBuffer
	logger := zerolog.New(&logs).Level(zerolog.DebugLevel)
	model := workflow.ModelFunc(func(context.Context, workflow.ModelRequest) (workflow.ModelResponse, error) {
		return workflow.ModelResponse{Text: "{}"}, nil
	})
	e := newEngine(t, engine.Config{InstanceID: "here", Logger: logger}, store, model, callThenComplete)
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for _, wf := range []*workflow.Workflow{dead, deadFirst, queued} {
		if got, err := e.Wait(wctx, wf.ID); err != nil || got.Status != workflow.StatusCompleted {
			t.Fatalf("round %s: %+v, %v; want completed", wf.ID, got, err)
		}
	}
	mine, err := e.Create(ctx, engine.NewWorkflow{UserID: "alice", Prompt: "q"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := e.Wait(wctx, mine.ID); err != nil || got.Status != workflow.StatusCompleted {
		t.Fatalf("own round: %+v, %v; want completed", got, err)
	}
	takeover := func(wf *workflow.Workflow) logLine {
		return logLine{"message": "round taken over", "level": "info", "instance": "here", "workflow": wf.ID}
	}
	for _, c := range []struct {
		wf   *workflow.Workflow
		want logLine // the takeover line's other fields, nil for none
	}{
		{dead, logLine{"round": 1, "step": 2, "fence": 2, "from": "dead", "cause": "lease expired"}},
		{deadFirst, logLine{"round": 1, "step": 1, "fence": 2, "from": "dead", "cause": "lease expired"}},
		{queued, nil},
		{mine, nil},
	} {
		line := takeover(c.wf)
		switch {
		case c.want != nil && !logs.has(line.with(c.want)):
			t.Errorf("no takeover line %v in:\n%s", line.with(c.want), logs.String())
		case c.want == nil && logs.has(line):
			t.Errorf("round %s was logged as taken over:\n%s", c.wf.ID, logs.String())
		}
	}
	// Every claim is logged at debug level, the takeover's and the own
	// round's alike.
	for _, want := range []logLine{{"workflow": dead.ID, "fence": 2}, {"workflow": mine.ID, "fence": 1}} {
		if line := want.with(logLine{"message": "round claimed", "level": "debug", "instance": "here"}); !logs.has(line) {
			t.Errorf("no claim line %v in:\n%s", line, logs.String())
		}
	}
}

// lockedBuffer is a bytes.Buffer safe for the engine's concurrent logging.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// logLine is the fields of one JSON log line, numbers as ints.
type logLine map[string]any

// with returns l with more's fields added.
func (l logLine) with(more logLine) logLine {
	out := logLine{}
	maps.Copy(out, l)
	maps.Copy(out, more)
	return out
}

// has reports whether a JSON line of the buffer has every field of want,
// with its value.
func (l *lockedBuffer) has(want logLine) bool {
	for _, text := range strings.Split(l.String(), "\n") {
		var got map[string]any
		if json.Unmarshal([]byte(text), &got) != nil {
			continue
		}
		if all(want, func(k string, v any) bool { return fmt.Sprint(got[k]) == fmt.Sprint(v) }) {
			return true
		}
	}
	return false
}

// all reports whether f holds for every field of l.
func all(l logLine, f func(string, any) bool) bool {
	for k, v := range l {
		if !f(k, v) {
			return false
		}
	}
	return true
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Shutdown lets a model call in flight finish and its phase commit instead
// of cancelling it (a cancelled call is paid for twice), within the grace.
func TestShutdownLetsThePhaseInFlightFinish(t *testing.T) {
	t.Parallel()
	store := memstore.New()
	started, release := make(chan struct{}), make(chan struct{})
	var calls, cancelled atomic.Int32
	model := workflow.ModelFunc(func(ctx context.Context, _ workflow.ModelRequest) (workflow.ModelResponse, error) {
		if calls.Add(1) == 1 {
			close(started)
		}
		select {
		case <-release:
			return workflow.ModelResponse{Text: "{}"}, nil
		case <-ctx.Done():
			cancelled.Add(1)
			return workflow.ModelResponse{}, ctx.Err()
		}
	})
	cfg := engine.Config{ShutdownGrace: 10 * time.Second, PollInterval: 10 * time.Millisecond,
		RecoverInterval: 50 * time.Millisecond, LeaseTTL: time.Second}
	e, err := engine.New(cfg, store, model, enginetest.NewRegistry(),
		map[workflow.ModeName]workflow.Mode{workflow.ModeReact: stubMode{callThenComplete}})
	if err != nil {
		t.Fatal(err)
	}
	e.Start(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wf, err := e.Create(ctx, engine.NewWorkflow{UserID: "alice", Prompt: "p"})
	if err != nil {
		t.Fatal(err)
	}
	<-started
	shut := make(chan error, 1)
	go func() { shut <- e.Shutdown(ctx) }()
	time.Sleep(50 * time.Millisecond) // Shutdown is draining, the call still in flight
	close(release)
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	got, err := store.GetWorkflow(ctx, wf.ID)
	if err != nil || got.Status != workflow.StatusCompleted || calls.Load() != 1 || cancelled.Load() != 0 {
		t.Fatalf("after shutdown: %+v (%v), %d calls, %d cancelled; want the call finished and committed",
			got, err, calls.Load(), cancelled.Load())
	}
}
