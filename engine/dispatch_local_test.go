package engine_test

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/workflow"
	"github.com/twostep/twostep/workflow/dispatchtest"
)

func TestLocalDispatcher(t *testing.T) {
	t.Parallel()
	dispatchtest.Run(t, func(*testing.T) workflow.Dispatcher { return engine.NewLocalDispatcher() })
}

// dispatchEvents is an Observer that counts dispatch events.
type dispatchEvents struct {
	mu sync.Mutex
	n  map[string]int
}

func (o *dispatchEvents) RoundEnded(*workflow.Workflow) {}
func (o *dispatchEvents) StepFinished(workflow.ModeName, string, workflow.MessageStatus, time.Duration) {
}
func (o *dispatchEvents) ModelCalled(workflow.Stage, string, int, int) {}
func (o *dispatchEvents) ApprovalRequested(string)                     {}
func (o *dispatchEvents) ApprovalDecided(string, time.Duration)        {}
func (o *dispatchEvents) Dispatched(event string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.n == nil {
		o.n = map[string]int{}
	}
	o.n[event]++
}

func (o *dispatchEvents) counts() map[string]int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return maps.Clone(o.n)
}

// dispatchEngine is an engine sharing d, whose recovery scan runs only at
// start (every hour after), so rounds reach it only through d.
func dispatchEngine(t *testing.T, id string, d workflow.Dispatcher, store workflow.Store, start bool, log zerolog.Logger, obs ...engine.Observer) *enginetest.Engine {
	t.Helper()
	model := workflow.ModelFunc(func(context.Context, workflow.ModelRequest) (workflow.ModelResponse, error) {
		return workflow.ModelResponse{Text: "{}"}, nil
	})
	cfg := engine.Config{InstanceID: id, Dispatcher: d, RecoverInterval: time.Hour,
		ReclaimInterval: 20 * time.Millisecond, LeaseTTL: 150 * time.Millisecond, PollInterval: 10 * time.Millisecond,
		ShutdownGrace: 50 * time.Millisecond, Logger: log}
	if len(obs) > 0 {
		cfg.Observer = obs[0]
	}
	e, err := enginetest.NewEngine(cfg, store, model, enginetest.NewRegistry(),
		map[workflow.ModeName]workflow.Mode{workflow.ModeReact: stubMode{callThenComplete}})
	if err != nil {
		t.Fatal(err)
	}
	if start {
		e.Start(context.Background())
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := e.Shutdown(ctx); err != nil {
				t.Errorf("Shutdown: %v", err)
			}
		})
	}
	return e
}

// Rounds accepted by an engine that runs none (an API-only instance) are
// run by the worker engine sharing the dispatcher, not found by a scan;
// every entry is acked once its round completed, and the observers count
// each step.
func TestDispatchedRoundsRunOnTheWorkerEngine(t *testing.T) {
	t.Parallel()
	store, d := memstore.New(), engine.NewLocalDispatcher()
	apiEvents, workerEvents := &dispatchEvents{}, &dispatchEvents{}
	api := dispatchEngine(t, "api", d, store, false, zerolog.Logger{}, apiEvents)
	worker := dispatchEngine(t, "worker", d, store, true, zerolog.Logger{}, workerEvents)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var ids []string
	for range 5 {
		wf, err := api.Create(ctx, engine.NewWorkflow{UserID: "alice", Prompt: "p"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, wf.ID)
		if got, err := worker.Wait(ctx, wf.ID); err != nil || got.Status != workflow.StatusCompleted {
			t.Fatalf("dispatched round: %+v, %v; want completed", got, err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		pending, queued := d.Pending()
		if pending == 0 && queued == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %d completed rounds: %d entries pending, %d queued; want all acked", len(ids), pending, queued)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got, want := apiEvents.counts(), map[string]int{workflow.DispatchEnqueued: 5}; !maps.Equal(got, want) {
		t.Errorf("API engine's dispatch events: %v, want %v", got, want)
	}
	for workerEvents.counts()[workflow.DispatchAcked] < 5 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // the ack is counted just after Pending drops
	}
	if got, want := workerEvents.counts(), map[string]int{workflow.DispatchReceived: 5, workflow.DispatchAcked: 5}; !maps.Equal(got, want) {
		t.Errorf("worker engine's dispatch events: %v, want %v", got, want)
	}
}

// An entry a dead instance received (it claimed the lease, progressed the
// round and died) is reclaimed once it idled a LeaseTTL: the round is
// finished here, logged as taken over, and its entry acked.
func TestLeftEntryIsReclaimedAndTakenOver(t *testing.T) {
	t.Parallel()
	for _, step := range []int{1, 2} { // died in its first step, or after one
		t.Run(fmt.Sprintf("step%d", step), func(t *testing.T) {
			t.Parallel()
			testLeftEntryIsReclaimedAndTakenOver(t, step)
		})
	}
}

func testLeftEntryIsReclaimedAndTakenOver(t *testing.T, step int) {
	store, d := memstore.New(), engine.NewLocalDispatcher()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wf := &workflow.Workflow{ID: workflow.NewID(workflow.PrefixWorkflow), UserID: "alice", Mode: workflow.ModeReact,
		Status: workflow.StatusRunning, Round: 1, Step: step, MaxSteps: 3, Checkpoint: &workflow.Checkpoint{Phase: workflow.PhaseSelect}}
	if _, _, err := store.Commit(ctx, workflow.Commit{Workflow: wf, Messages: []workflow.Message{{
		ID: workflow.NewID(workflow.PrefixMessage), Round: 1, Role: workflow.RoleUser, Text: "p"}}}); err != nil {
		t.Fatal(err)
	}
	if err := d.Enqueue(ctx, wf.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := d.Receive(ctx, "dead", 0); !ok || err != nil {
		t.Fatalf("the dead instance's Receive: %v %v", ok, err)
	}
	if fence, err := store.ClaimRound(ctx, wf.ID, "dead", 100*time.Millisecond); fence == 0 || err != nil {
		t.Fatalf("ClaimRound: %v %v", fence, err)
	}
	var logs lockedBuffer
	e := dispatchEngine(t, "here", d, store, true, zerolog.New(&logs))
	got, err := e.Wait(ctx, wf.ID)
	if err != nil || got.Status != workflow.StatusCompleted {
		t.Fatalf("the left round: %+v, %v; want completed here", got, err)
	}
	if !logs.has(logLine{"message": "round taken over", "instance": "here", "workflow": wf.ID, "round": 1, "step": step, "fence": 2, "from": "dead"}) {
		t.Errorf("no takeover line in:\n%s", logs.String())
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if pending, queued := d.Pending(); pending == 0 && queued == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the reclaimed entry was never acked")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A round held by a live instance is not run while its lease is held, even
// though its entry is delivered and reclaimed again and again; once the
// holder lets go, it runs here.
func TestDeliveredRoundHeldElsewhereWaits(t *testing.T) {
	t.Parallel()
	store, d := memstore.New(), engine.NewLocalDispatcher()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	api := dispatchEngine(t, "api", d, store, false, zerolog.Logger{})
	wf, err := api.Create(ctx, engine.NewWorkflow{UserID: "alice", Prompt: "p"})
	if err != nil {
		t.Fatal(err)
	}
	if fence, err := store.ClaimRound(ctx, wf.ID, "holder", time.Hour); fence == 0 || err != nil {
		t.Fatalf("ClaimRound: %v %v", fence, err)
	}
	e := dispatchEngine(t, "here", d, store, true, zerolog.Logger{})
	time.Sleep(600 * time.Millisecond) // busy retries, then reclaims every LeaseTTL (150ms)
	if got, _ := store.GetWorkflow(ctx, wf.ID); got.Status != workflow.StatusRunning || got.Step != 1 {
		t.Fatalf("a round leased elsewhere ran here: %+v", got)
	}
	if err := store.ReleaseRound(ctx, wf.ID, "holder"); err != nil {
		t.Fatal(err)
	}
	if got, err := e.Wait(ctx, wf.ID); err != nil || got.Status != workflow.StatusCompleted {
		t.Fatalf("after the holder let go: %+v, %v", got, err)
	}
}

// A shutting-down engine hands the round it interrupted to another one at
// once, not after its lease expired: the other engine's reclaim and
// recovery scan run only hourly here. A round that came with an entry gets
// it requeued; one the leaving engine's scan found gets a new entry.
func TestShutdownHandsTheRoundOver(t *testing.T) {
	t.Parallel()
	for _, viaScan := range []bool{false, true} {
		name := map[bool]string{false: "from an entry", true: "found by the scan"}[viaScan]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			handOver(t, viaScan)
		})
	}
}

func handOver(t *testing.T, viaScan bool) {
	store, d := memstore.New(), engine.NewLocalDispatcher()
	started := make(chan struct{}, 1)
	stuck := workflow.ModelFunc(func(ctx context.Context, _ workflow.ModelRequest) (workflow.ModelResponse, error) {
		started <- struct{}{}
		<-ctx.Done()
		return workflow.ModelResponse{}, ctx.Err()
	})
	modes := map[workflow.ModeName]workflow.Mode{workflow.ModeReact: stubMode{callThenComplete}}
	cfg := engine.Config{InstanceID: "leaving", Dispatcher: d, RecoverInterval: time.Hour,
		ReclaimInterval: time.Hour, LeaseTTL: time.Hour, PollInterval: 10 * time.Millisecond, ShutdownGrace: 50 * time.Millisecond}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var id string
	if viaScan { // running in the store, with no entry: the start-up scan finds it
		wf := &workflow.Workflow{ID: workflow.NewID(workflow.PrefixWorkflow), UserID: "alice", Mode: workflow.ModeReact,
			Status: workflow.StatusRunning, Round: 1, Step: 1, MaxSteps: 3, Checkpoint: &workflow.Checkpoint{Phase: workflow.PhaseSelect}}
		if _, _, err := store.Commit(ctx, workflow.Commit{Workflow: wf, Messages: []workflow.Message{{
			ID: workflow.NewID(workflow.PrefixMessage), Round: 1, Role: workflow.RoleUser, Text: "p"}}}); err != nil {
			t.Fatal(err)
		}
		id = wf.ID
	}
	leaving, err := engine.New(cfg, store, stuck, enginetest.NewRegistry(), modes)
	if err != nil {
		t.Fatal(err)
	}
	leaving.Start(context.Background())
	if !viaScan {
		wf, err := leaving.Create(ctx, engine.NewWorkflow{UserID: "alice", Prompt: "p"})
		if err != nil {
			t.Fatal(err)
		}
		id = wf.ID
	}
	<-started
	answers := workflow.ModelFunc(func(context.Context, workflow.ModelRequest) (workflow.ModelResponse, error) {
		return workflow.ModelResponse{Text: "{}"}, nil
	})
	cfg.InstanceID = "staying"
	staying, err := enginetest.NewEngine(cfg, store, answers, enginetest.NewRegistry(), modes)
	if err != nil {
		t.Fatal(err)
	}
	staying.Start(context.Background())
	t.Cleanup(func() { _ = staying.Shutdown(context.Background()) })
	if err := leaving.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := staying.Wait(ctx, id)
	if err != nil || got.Status != workflow.StatusCompleted {
		t.Fatalf("the handed-over round: %+v, %v; want completed by the staying engine", got, err)
	}
}
