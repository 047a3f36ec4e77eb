package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/workflow"
)

// TestStopDeletesTheQueuedRoundsUploads: the uploads of a queued round are
// stored when it is queued; a stop that discards the queue deletes them
// in its commit (no message will ever carry them), and leaves the first
// round's upload alone.
func TestStopDeletesTheQueuedRoundsUploads(t *testing.T) {
	t.Parallel()
	model := &gatedModel{gate: make(chan struct{}), started: make(chan int, 16)}
	store := memstore.New()
	e := newEngine(t, engine.Config{}, store, model, selectThenComplete)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	upload := func(name string) []workflow.DocumentContent {
		return []workflow.DocumentContent{{Document: workflow.Document{Name: name, MimeType: "text/plain"}, Content: []byte(name + " bytes")}}
	}
	wf, err := e.Create(ctx, engine.NewWorkflow{UserID: "alice", Prompt: "first", Documents: upload("first.txt")})
	if err != nil {
		t.Fatal(err)
	}
	<-model.started
	queued, err := e.StartRound(ctx, "alice", wf.ID, engine.NewRound{Prompt: "later", Documents: upload("later.txt"), OnBusy: workflow.OnBusyEnqueue})
	if err != nil || len(queued.QueuedRounds) != 1 || len(queued.QueuedRounds[0].Documents) != 1 {
		t.Fatalf("queued = %+v, %v", queued, err)
	}
	later := queued.QueuedRounds[0].Documents[0].ID
	if _, err := store.DocumentContent(ctx, wf.ID, later); err != nil {
		t.Fatalf("the queued round's upload is not stored: %v", err)
	}
	if _, err := e.Stop(ctx, "alice", wf.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := store.DocumentContent(ctx, wf.ID, later); workflow.KindOf(err) != workflow.KindNotFound {
		t.Errorf("after the stop, the discarded round's upload reads %v, want not found", err)
	}
	msgs, err := store.Messages(ctx, wf.ID, 0, 0)
	if err != nil || len(msgs) == 0 || len(msgs[0].Documents) != 1 {
		t.Fatalf("messages = %+v, %v", msgs, err)
	}
	if _, err := store.DocumentContent(ctx, wf.ID, msgs[0].Documents[0].ID); err != nil {
		t.Errorf("the first round's upload is gone: %v", err)
	}
}

// TestQueuedRoundsAreBoundedPerUser: a user's queued rounds are counted
// over all their workflows: with a bound of three, three rounds queued on
// two busy workflows leave no room for a fourth on either, while another
// user still queues.
func TestQueuedRoundsAreBoundedPerUser(t *testing.T) {
	t.Parallel()
	model := &gatedModel{gate: make(chan struct{}), started: make(chan int, 16)}
	store := memstore.New()
	e := newEngine(t, engine.Config{MaxQueuedPerUser: 3}, store, model, selectThenComplete)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := func(user string) *workflow.Workflow {
		wf, err := e.Create(ctx, engine.NewWorkflow{UserID: user, Prompt: "busy"})
		if err != nil {
			t.Fatal(err)
		}
		<-model.started
		return wf
	}
	enqueue := func(user string, wf *workflow.Workflow) error {
		_, err := e.StartRound(ctx, user, wf.ID, engine.NewRound{Prompt: "more", OnBusy: workflow.OnBusyEnqueue})
		return err
	}
	a, b := start("alice"), start("alice")
	for i, wf := range []*workflow.Workflow{a, a, b} {
		if err := enqueue("alice", wf); err != nil {
			t.Fatalf("queued round %d: %v", i+1, err)
		}
	}
	for _, wf := range []*workflow.Workflow{a, b} {
		if err := enqueue("alice", wf); workflow.KindOf(err) != workflow.KindTooMany {
			t.Errorf("a fourth queued round of alice's on %s: %v, want KindTooMany", wf.ID, err)
		}
	}
	if err := enqueue("bob", start("bob")); err != nil {
		t.Errorf("bob's queued round: %v, want it accepted", err)
	}
}
