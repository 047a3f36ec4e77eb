package engine_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/workflow"
)

// recorder is an Observer that records its events as strings.
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, s)
}

func (r *recorder) RoundEnded(wf *workflow.Workflow) { r.add("round " + string(wf.StopReason)) }
func (r *recorder) StepFinished(mode workflow.ModeName, action string, status workflow.MessageStatus, _ time.Duration) {
	r.add("step " + string(mode) + " " + action + " " + string(status))
}
func (r *recorder) ModelCalled(stage workflow.Stage, outcome string, pt, ct int) {
	r.add("model " + string(stage) + " " + outcome)
}
func (r *recorder) ApprovalRequested(action string)                 { r.add("approval requested " + action) }
func (r *recorder) ApprovalDecided(outcome string, _ time.Duration) { r.add("approval " + outcome) }
func (r *recorder) Dispatched(string)                               {}

func TestObserverSeesModelCallsStepsAndRoundEnd(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	model := workflow.ModelFunc(func(context.Context, workflow.ModelRequest) (workflow.ModelResponse, error) {
		return workflow.ModelResponse{Text: "{}", PromptTokens: 10, CompletionTokens: 2}, nil
	})
	store := memstore.New()
	e := newEngine(t, engine.Config{Observer: rec}, store, model, callThenComplete)
	wf, err := e.Create(context.Background(), engine.NewWorkflow{UserID: "alice", Prompt: "p"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	got, err := e.Wait(ctx, wf.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantStats := workflow.Stats{LLMCalls: 1, PromptTokens: 10, CompletionTokens: 2,
		ByStage: workflow.StageTableOf(map[workflow.Stage]workflow.StageStats{workflow.StageOne: {Calls: 1, PromptTokens: 10, CompletionTokens: 2}})}
	if diff := cmp.Diff(wantStats, got.Stats); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	want := []string{"model stage1 ok", "step react  success", "round completed"}
	if diff := cmp.Diff(want, rec.events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	traces, _ := store.Traces(ctx, wf.ID)
	if len(traces) != 1 || traces[0].Step != 1 || traces[0].Round != 1 || traces[0].Response != "{}" || traces[0].PromptTokens != 10 {
		t.Errorf("traces = %+v, want the one call", traces)
	}
}

// publishes is a workflow.Changes that records what the engine publishes.
type publishes struct {
	mu      sync.Mutex
	changes []workflow.Change
	ended   chan workflow.Change // each change that ended a round, when set
}

func (p *publishes) Publish(c workflow.Change) {
	p.mu.Lock()
	p.changes = append(p.changes, c)
	p.mu.Unlock()
	if c.Ended != nil && p.ended != nil {
		p.ended <- c
	}
}

func (p *publishes) Subscribe(string) (<-chan workflow.Change, func()) { return nil, func() {} }

// count returns how many changes were published.
func (p *publishes) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.changes)
}

// TestEnginePublishesEveryCommit: the engine publishes every commit it
// makes, the request's and each of the round's, by workflow id: as many
// as the workflow's version counts; the last one carries the round's end.
func TestEnginePublishesEveryCommit(t *testing.T) {
	t.Parallel()
	pub := &publishes{}
	model := workflow.ModelFunc(func(context.Context, workflow.ModelRequest) (workflow.ModelResponse, error) {
		return workflow.ModelResponse{Text: "{}"}, nil
	})
	e := newEngine(t, engine.Config{Changes: pub}, memstore.New(), model, callThenComplete)
	wf, got := createAndWait(t, e)
	// The wait may see the last commit in the store before the engine has
	// published it: give it a moment.
	deadline := time.Now().Add(5 * time.Second)
	for int64(pub.count()) < got.Version && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	pub.mu.Lock()
	defer pub.mu.Unlock()
	if int64(len(pub.changes)) != got.Version || got.Version < 2 {
		t.Errorf("published %d commits %+v; the workflow's version is %d", len(pub.changes), pub.changes, got.Version)
	}
	for i, c := range pub.changes {
		if c.WorkflowID != wf.ID {
			t.Errorf("published a commit of %q, want only %q", c.WorkflowID, wf.ID)
		}
		if last := i == len(pub.changes)-1; (c.Ended != nil) != last {
			t.Errorf("change %d of %d: ended = %+v, want a round's end on the last one only", i+1, len(pub.changes), c.Ended)
		}
	}
	if last := pub.changes[len(pub.changes)-1].Ended; last == nil || last.Status != workflow.StatusCompleted || last.Version != got.Version {
		t.Errorf("the last change ended %+v, want the completed workflow at version %d", last, got.Version)
	}
}

// TestEnginePublishesTheRunsMessages: the end of a round run here is
// published with the workflow's messages as stored (the prompt and what
// the round added, with their seqs), exactly what a read gives.
func TestEnginePublishesTheRunsMessages(t *testing.T) {
	t.Parallel()
	pub := &publishes{ended: make(chan workflow.Change, 1)}
	model := workflow.ModelFunc(func(context.Context, workflow.ModelRequest) (workflow.ModelResponse, error) {
		return workflow.ModelResponse{Text: "{}"}, nil
	})
	store := memstore.New()
	e := newEngine(t, engine.Config{Changes: pub}, store, model, callThenComplete)
	wf, err := e.Create(context.Background(), engine.NewWorkflow{UserID: "alice", Prompt: "p"})
	if err != nil {
		t.Fatal(err)
	}
	var got []workflow.Message
	select {
	case c := <-pub.ended:
		got = c.Messages
	case <-time.After(5 * time.Second):
		t.Fatal("the round's end was not published with its messages")
	}
	want, err := store.Messages(context.Background(), wf.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) < 2 {
		t.Fatalf("the store holds %d messages, want the prompt and the round's", len(want))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("messages published (-stored +published):\n%s", diff)
	}
}
