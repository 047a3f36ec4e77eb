package engine_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/workflow"
)

// selectThenComplete commits the select phase after one model call, then
// completes the round with an answer naming the round: every phase of a
// step is its own commit, as in the react mode.
func selectThenComplete(ctx context.Context, run workflow.Run) error {
	wf := run.Workflow()
	if wf.Checkpoint.Phase == workflow.PhaseSelect {
		if _, err := run.Generate(ctx, workflow.ModelCall{Stage: workflow.StageOne, Attempt: 1}); err != nil {
			return err
		}
		return run.Checkpoint(ctx, workflow.Checkpoint{Phase: workflow.PhaseParameterize})
	}
	return run.CommitStep(ctx, workflow.StepResult{
		Messages: []workflow.Message{{ID: workflow.NewID(workflow.PrefixMessage), Role: workflow.RoleAssistant,
			Round: wf.Round, Step: wf.Step, Text: fmt.Sprintf("answer %d", wf.Round)}},
		End: &workflow.RoundEnd{Status: workflow.StatusCompleted, Reason: workflow.StopCompleted},
	})
}

// gatedModel answers a call once the test lets it through; calls counts
// the calls begun, started receives each one.
type gatedModel struct {
	gate    chan struct{}
	started chan int
	calls   atomic.Int32
	// holdFirst: the first call answers only when cancelled.
	holdFirst bool
}

func (m *gatedModel) Generate(ctx context.Context, _ workflow.ModelRequest) (workflow.ModelResponse, error) {
	n := int(m.calls.Add(1))
	m.started <- n
	if m.holdFirst && n == 1 {
		<-ctx.Done()
		return workflow.ModelResponse{}, ctx.Err()
	}
	select {
	case <-m.gate:
		return workflow.ModelResponse{Text: "ok"}, nil
	case <-ctx.Done():
		return workflow.ModelResponse{}, ctx.Err()
	}
}

// userAndAnswers lists the round's user prompts and assistant texts, in
// message order, as "round:role:text".
func userAndAnswers(msgs []workflow.Message) []string {
	var out []string
	for _, m := range msgs {
		text := m.Text
		if m.Role == workflow.RoleAssistant && strings.Contains(text, "interrupted") {
			text = "interrupted"
		}
		out = append(out, fmt.Sprintf("%d:%s:%s", m.Round, m.Role, text))
	}
	return out
}

func TestEnqueuedRoundsRunInOrder(t *testing.T) {
	t.Parallel()
	model := &gatedModel{gate: make(chan struct{}), started: make(chan int, 16)}
	store := memstore.New()
	e := newEngine(t, engine.Config{}, store, model, selectThenComplete)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wf, err := e.Create(ctx, engine.NewWorkflow{UserID: "alice", Prompt: "first"})
	if err != nil {
		t.Fatal(err)
	}
	<-model.started // round 1 is inside its model call
	if _, err := e.StartRound(ctx, "alice", wf.ID, engine.NewRound{Prompt: "rejected"}); workflow.KindOf(err) != workflow.KindConflict {
		t.Errorf("a new round while one runs, default onBusy: %v, want KindConflict", err)
	}
	for i, p := range []string{"a", "b", "c"} {
		in := engine.NewRound{Prompt: p, OnBusy: workflow.OnBusyEnqueue}
		if p == "b" {
			in.Documents = []workflow.DocumentContent{{Document: workflow.Document{Name: "b.txt", MimeType: "text/plain"}, Content: []byte("bee")}}
		}
		got, err := e.StartRound(ctx, "alice", wf.ID, in)
		if err != nil {
			t.Fatalf("enqueue %s: %v", p, err)
		}
		if len(got.QueuedRounds) != i+1 || got.QueuedRounds[i].Prompt != p || got.Round != 1 {
			t.Fatalf("after enqueueing %s: round %d, queue %+v", p, got.Round, got.QueuedRounds)
		}
	}
	close(model.gate)
	end, err := e.Wait(ctx, wf.ID)
	if err != nil {
		t.Fatal(err)
	}
	if end.Status != workflow.StatusCompleted || end.Round != 4 || len(end.QueuedRounds) != 0 {
		t.Fatalf("ended at round %d status %s with queue %+v, want round 4 completed, queue empty", end.Round, end.Status, end.QueuedRounds)
	}
	// Queueing never cost the running round its commit: one model call
	// per round, none repeated by a recovery.
	if n := model.calls.Load(); n != 4 {
		t.Errorf("%d model calls, want 4 (one per round)", n)
	}
	msgs, _ := store.Messages(ctx, wf.ID, 0, 0)
	want := []string{"1:user:first", "1:assistant:answer 1", "2:user:a", "2:assistant:answer 2",
		"3:user:b", "3:assistant:answer 3", "4:user:c", "4:assistant:answer 4"}
	if got := userAndAnswers(msgs); !slices.Equal(got, want) {
		t.Errorf("messages = %q\nwant %q", got, want)
	}
	// Round 3's upload, stored when it was queued, is its user message's.
	b := msgs[4]
	if len(b.Documents) != 1 || b.DocumentsLabel != workflow.UserLabel(3) || b.Documents[0].MessageID != b.ID {
		t.Fatalf("round 3's user message: %+v", b)
	}
	doc, err := store.DocumentContent(ctx, wf.ID, b.Documents[0].ID)
	if err != nil || string(doc.Content) != "bee" {
		t.Errorf("round 3's upload: %q, %v; want its bytes", doc.Content, err)
	}
}

// TestInterruptEndsTheRoundAtASafePoint: an interrupting round cancels
// the model call in flight, ends the running round with a closing message
// and no half step, and starts at once.
func TestInterruptEndsTheRoundAtASafePoint(t *testing.T) {
	t.Parallel()
	model := &gatedModel{gate: make(chan struct{}), started: make(chan int, 16), holdFirst: true}
	close(model.gate)
	store := memstore.New()
	e := newEngine(t, engine.Config{}, store, model, selectThenComplete)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wf, err := e.Create(ctx, engine.NewWorkflow{UserID: "alice", Prompt: "slow"})
	if err != nil {
		t.Fatal(err)
	}
	<-model.started // round 1's Stage 1 call hangs
	got, err := e.StartRound(ctx, "alice", wf.ID, engine.NewRound{Prompt: "instead", OnBusy: workflow.OnBusyInterrupt})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.QueuedRounds) != 1 || !got.QueuedRounds[0].Interrupt {
		t.Fatalf("queue after interrupt = %+v, want the interrupting round", got.QueuedRounds)
	}
	end, err := e.Wait(ctx, wf.ID)
	if err != nil {
		t.Fatal(err)
	}
	if end.Status != workflow.StatusCompleted || end.Round != 2 {
		t.Fatalf("ended at round %d status %s, want round 2 completed", end.Round, end.Status)
	}
	msgs, _ := store.Messages(ctx, wf.ID, 0, 0)
	want := []string{"1:user:slow", "1:assistant:interrupted", "2:user:instead", "2:assistant:answer 2"}
	if got := userAndAnswers(msgs); !slices.Equal(got, want) {
		t.Errorf("messages = %q\nwant %q", got, want)
	}
}

func TestStopDiscardsQueuedRounds(t *testing.T) {
	t.Parallel()
	model := &gatedModel{gate: make(chan struct{}), started: make(chan int, 16)}
	store := memstore.New()
	e := newEngine(t, engine.Config{}, store, model, selectThenComplete)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wf, err := e.Create(ctx, engine.NewWorkflow{UserID: "alice", Prompt: "first"})
	if err != nil {
		t.Fatal(err)
	}
	<-model.started
	if _, err := e.StartRound(ctx, "alice", wf.ID, engine.NewRound{Prompt: "later", OnBusy: workflow.OnBusyEnqueue}); err != nil {
		t.Fatal(err)
	}
	stopped, err := e.Stop(ctx, "alice", wf.ID)
	if err != nil {
		t.Fatal(err)
	}
	if stopped.Status != workflow.StatusStopped || len(stopped.QueuedRounds) != 0 {
		t.Errorf("stopped: status %s queue %+v, want stopped with no queue", stopped.Status, stopped.QueuedRounds)
	}
	if _, err := e.StartRound(ctx, "alice", wf.ID, engine.NewRound{Prompt: "x", OnBusy: "later"}); workflow.KindOf(err) != workflow.KindInvalid {
		t.Errorf("onBusy later: %v, want KindInvalid", err)
	}
}

// TestInterruptAPausedRound: a round paused for approval is ended at once
// by an interrupting round (its approval cancelled), which starts.
func TestInterruptAPausedRound(t *testing.T) {
	t.Parallel()
	step := func(ctx context.Context, run workflow.Run) error {
		if run.Workflow().Round == 1 {
			return pauseFor(ctx, run, workflow.Gate{Action: "document.generate", Objective: "o"})
		}
		return selectThenComplete(ctx, run)
	}
	model := &gatedModel{gate: make(chan struct{}), started: make(chan int, 16)}
	close(model.gate)
	store := memstore.New()
	e := newEngine(t, engine.Config{Approvals: holdEvery{}}, store, model, step)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wf, err := e.Create(ctx, engine.NewWorkflow{UserID: "alice", Prompt: "paused"})
	if err != nil {
		t.Fatal(err)
	}
	if w, err := e.Wait(ctx, wf.ID); err != nil || w.Status != workflow.StatusAwaitingApproval {
		t.Fatalf("round 1: %+v %v, want awaiting approval", w, err)
	}
	got, err := e.StartRound(ctx, "alice", wf.ID, engine.NewRound{Prompt: "instead", OnBusy: workflow.OnBusyInterrupt})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != workflow.StatusRunning || got.Round != 2 || got.PendingApproval != nil || len(got.QueuedRounds) != 0 {
		t.Fatalf("after the interrupt: status %s round %d approval %v queue %v, want round 2 running at once",
			got.Status, got.Round, got.PendingApproval, got.QueuedRounds)
	}
	end, err := e.Wait(ctx, wf.ID)
	if err != nil || end.Status != workflow.StatusCompleted || end.Round != 2 {
		t.Fatalf("ended %+v %v, want round 2 completed", end, err)
	}
	msgs, _ := store.Messages(ctx, wf.ID, 0, 0)
	want := []string{"1:user:paused", "1:assistant:interrupted", "2:user:instead", "2:assistant:answer 2"}
	if got := userAndAnswers(msgs); !slices.Equal(got, want) {
		t.Errorf("messages = %q\nwant %q", got, want)
	}
}

// TestEnqueueWhilePausedRunsAfterTheDecision: a round queued behind a
// paused round starts once the approved round ends.
func TestEnqueueWhilePausedRunsAfterTheDecision(t *testing.T) {
	t.Parallel()
	step := func(ctx context.Context, run workflow.Run) error {
		wf := run.Workflow()
		if wf.Round == 1 && wf.Checkpoint.Approval == nil {
			return pauseFor(ctx, run, workflow.Gate{Action: "document.generate", Objective: "o"})
		}
		return run.CommitStep(ctx, workflow.StepResult{
			Messages: []workflow.Message{{ID: workflow.NewID(workflow.PrefixMessage), Role: workflow.RoleAssistant,
				Round: wf.Round, Step: wf.Step, Text: fmt.Sprintf("answer %d", wf.Round)}},
			End: &workflow.RoundEnd{Status: workflow.StatusCompleted, Reason: workflow.StopCompleted},
		})
	}
	model := &gatedModel{gate: make(chan struct{}), started: make(chan int, 16)}
	close(model.gate)
	store := memstore.New()
	e := newEngine(t, engine.Config{Approvals: holdEvery{}}, store, model, step)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wf, err := e.Create(ctx, engine.NewWorkflow{UserID: "alice", Prompt: "paused"})
	if err != nil {
		t.Fatal(err)
	}
	paused, err := e.Wait(ctx, wf.ID)
	if err != nil || paused.PendingApproval == nil {
		t.Fatalf("round 1: %+v %v, want awaiting approval", paused, err)
	}
	if got, err := e.StartRound(ctx, "alice", wf.ID, engine.NewRound{Prompt: "after", OnBusy: workflow.OnBusyEnqueue}); err != nil || got.Status != workflow.StatusAwaitingApproval || len(got.QueuedRounds) != 1 {
		t.Fatalf("enqueue while paused: %+v %v", got, err)
	}
	if _, err := e.Decide(ctx, "alice", wf.ID, paused.PendingApproval.ID, workflow.Decision{Approve: true}); err != nil {
		t.Fatal(err)
	}
	end, err := e.Wait(ctx, wf.ID)
	if err != nil || end.Status != workflow.StatusCompleted || end.Round != 2 {
		t.Fatalf("ended %+v %v, want round 2 completed", end, err)
	}
	msgs, _ := store.Messages(ctx, wf.ID, 0, 0)
	want := []string{"1:user:paused", "1:assistant:answer 1", "2:user:after", "2:assistant:answer 2"}
	if got := userAndAnswers(msgs); !slices.Equal(got, want) {
		t.Errorf("messages = %q\nwant %q", got, want)
	}
}
