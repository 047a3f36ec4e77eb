package engine_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/webhooks"
	"github.com/twostep/twostep/workflow"
)

// TestQueuedRoundsEachSendTheirEvent: a round that ends while another is
// queued starts that one in the same commit (the workflow stays
// running), yet its end is still an event: three rounds, three
// round.completed deliveries.
func TestQueuedRoundsEachSendTheirEvent(t *testing.T) {
	t.Parallel()
	model := &gatedModel{gate: make(chan struct{}), started: make(chan int, 16)}
	store := memstore.New()
	src := &webhooks.Source{Subscriptions: store,
		View: func(w *workflow.Workflow) any { return map[string]any{"id": w.ID, "round": w.Round} }}
	e := newEngine(t, engine.Config{Webhooks: src}, store, model, selectThenComplete)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wf, err := e.Create(ctx, engine.NewWorkflow{UserID: "alice", Prompt: "first",
		Webhook: &workflow.WebhookSubscription{URL: "https://svc.example/in", Secret: "whsec_eA=="}})
	if err != nil {
		t.Fatal(err)
	}
	<-model.started
	for _, p := range []string{"a", "b"} {
		if _, err := e.StartRound(ctx, "alice", wf.ID, engine.NewRound{Prompt: p, OnBusy: workflow.OnBusyEnqueue}); err != nil {
			t.Fatal(err)
		}
	}
	close(model.gate)
	if end, err := e.Wait(ctx, wf.ID); err != nil || end.Round != 3 || end.Status != workflow.StatusCompleted {
		t.Fatalf("ended %+v (%v), want round 3 completed", end, err)
	}
	ds, err := store.WebhookDeliveries(ctx, wf.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 3 {
		t.Fatalf("%d deliveries, want 3 (one round.completed per round): %+v", len(ds), ds)
	}
	for i, d := range ds {
		var body struct {
			Data struct {
				Workflow struct {
					Round int `json:"round"`
				} `json:"workflow"`
			} `json:"data"`
		}
		if err := json.Unmarshal(d.Body, &body); err != nil {
			t.Fatal(err)
		}
		if d.Event != workflow.EventRoundCompleted || body.Data.Workflow.Round != i+1 {
			t.Errorf("delivery %d: %s of round %d, want round.completed of round %d", i, d.Event, body.Data.Workflow.Round, i+1)
		}
	}
}
