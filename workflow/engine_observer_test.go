package workflow_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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

func TestObserverSeesModelCallsStepsAndRoundEnd(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	model := workflow.ModelFunc(func(context.Context, workflow.ModelRequest) (workflow.ModelResponse, error) {
		return workflow.ModelResponse{Text: "{}", PromptTokens: 10, CompletionTokens: 2}, nil
	})
	store := memstore.New()
	e := newEngine(t, workflow.EngineConfig{Observer: rec}, store, model, callThenComplete)
	wf, err := e.Create(context.Background(), workflow.NewWorkflow{UserID: "alice", Prompt: "p"})
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

// commitRecorder is a recorder that also hears commits.
type commitRecorder struct {
	recorder
	committed []string
}

func (r *commitRecorder) Committed(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.committed = append(r.committed, id)
}

// TestCommitObserverHearsEveryCommit: an Observer that is a CommitObserver
// hears every commit the engine makes, the request's and each of the
// round's, by workflow id: as many as the workflow's version counts.
func TestCommitObserverHearsEveryCommit(t *testing.T) {
	t.Parallel()
	rec := &commitRecorder{}
	model := workflow.ModelFunc(func(context.Context, workflow.ModelRequest) (workflow.ModelResponse, error) {
		return workflow.ModelResponse{Text: "{}"}, nil
	})
	e := newEngine(t, workflow.EngineConfig{Observer: rec}, memstore.New(), model, callThenComplete)
	wf, got := createAndWait(t, e)
	// Wait may see the last commit in the store before the engine has
	// told the observer: give it a moment.
	deadline := time.Now().Add(5 * time.Second)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for int64(len(rec.committed)) < got.Version && time.Now().Before(deadline) {
		rec.mu.Unlock()
		time.Sleep(time.Millisecond)
		rec.mu.Lock()
	}
	if int64(len(rec.committed)) != got.Version || got.Version < 2 {
		t.Errorf("heard %d commits %v; the workflow's version is %d", len(rec.committed), rec.committed, got.Version)
	}
	for _, id := range rec.committed {
		if id != wf.ID {
			t.Errorf("heard a commit of %q, want only %q", id, wf.ID)
		}
	}
}

// messagesRecorder is a recorder that also takes the messages of a round
// that ended in a run (workflow.RoundMessagesObserver).
type messagesRecorder struct {
	recorder
	ended chan []workflow.Message
}

func (r *messagesRecorder) RoundEndedWith(wf *workflow.Workflow, msgs []workflow.Message) {
	r.RoundEnded(wf)
	r.ended <- msgs
}

// TestObserverGetsTheRunsMessages: a RoundMessagesObserver is told the end
// of a round run here with the workflow's messages as stored (the prompt
// and what the round added, with their seqs), exactly what a read gives.
func TestObserverGetsTheRunsMessages(t *testing.T) {
	t.Parallel()
	rec := &messagesRecorder{ended: make(chan []workflow.Message, 1)}
	model := workflow.ModelFunc(func(context.Context, workflow.ModelRequest) (workflow.ModelResponse, error) {
		return workflow.ModelResponse{Text: "{}"}, nil
	})
	store := memstore.New()
	e := newEngine(t, workflow.EngineConfig{Observer: rec}, store, model, callThenComplete)
	wf, err := e.Create(context.Background(), workflow.NewWorkflow{UserID: "alice", Prompt: "p"})
	if err != nil {
		t.Fatal(err)
	}
	var got []workflow.Message
	select {
	case got = <-rec.ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the round's end was not told with its messages")
	}
	want, err := store.Messages(context.Background(), wf.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) < 2 {
		t.Fatalf("the store holds %d messages, want the prompt and the round's", len(want))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("messages handed over (-stored +handed):\n%s", diff)
	}
}
