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

// TestRoundEventsEnterTheOutbox: a pause and a Stop are events; each
// enters the outbox with the commit that makes it, for the subscriptions
// that want it — the workflow's own (events filtered) and its user's
// standing one (another user's workflow reaches no standing webhook of
// alice) — with the body {type, timestamp, data: {workflow}} of the
// workflow as that commit stored it.
func TestRoundEventsEnterTheOutbox(t *testing.T) {
	t.Parallel()
	pause := func(ctx context.Context, run workflow.Run) error {
		return pauseFor(ctx, run, workflow.Gate{Action: "test.echo", Objective: "o", Parameters: map[string]any{"text": "x"}})
	}
	store := memstore.New()
	src := &webhooks.Source{Subscriptions: store,
		Standing: []webhooks.Standing{{User: "alice", Sub: workflow.WebhookSubscription{URL: "https://audit.example/in",
			Events: []string{workflow.EventRoundStopped}, Secret: "standing-secret"}}},
		View: func(w *workflow.Workflow) any {
			return map[string]any{"id": w.ID, "status": w.Status, "version": w.Version}
		}}
	e := newEngine(t, engine.Config{Webhooks: src, Approvals: holdEvery{}}, store, blocking, pause)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	own := &workflow.WebhookSubscription{URL: "https://svc.example/in", Secret: "whsec_eA==",
		Events: []string{workflow.EventRoundAwaitingApproval, workflow.EventRoundCompleted}}
	wf, err := e.Create(ctx, engine.NewWorkflow{UserID: "alice", Prompt: "p", Webhook: own})
	if err != nil {
		t.Fatal(err)
	}
	other, err := e.Create(ctx, engine.NewWorkflow{UserID: "bob", Prompt: "p"})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct{ user, id string }{{"alice", wf.ID}, {"bob", other.ID}} {
		paused, err := e.Wait(ctx, w.id)
		if err != nil || paused.Status != workflow.StatusAwaitingApproval {
			t.Fatalf("round ended %+v (%v), want awaiting approval", paused, err)
		}
		if _, err := e.Stop(ctx, w.user, w.id); err != nil {
			t.Fatal(err)
		}
	}
	ds, err := store.ClaimWebhooks(ctx, time.Now().Add(time.Second), time.Minute, 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	type got struct{ event, url, status string }
	want := []got{
		{workflow.EventRoundAwaitingApproval, own.URL, "awaiting_approval"},
		{workflow.EventRoundStopped, "https://audit.example/in", "stopped"},
	}
	if len(ds) != len(want) {
		t.Fatalf("outbox holds %d deliveries, want %d: %+v", len(ds), len(want), ds)
	}
	for i, d := range ds {
		var body struct {
			Type string `json:"type"`
			Data struct {
				Workflow struct {
					ID     string `json:"id"`
					Status string `json:"status"`
				} `json:"workflow"`
			} `json:"data"`
		}
		if err := json.Unmarshal(d.Body, &body); err != nil {
			t.Fatal(err)
		}
		g := got{d.Event, d.URL, body.Data.Workflow.Status}
		if g != want[i] || body.Type != d.Event || body.Data.Workflow.ID != wf.ID || d.WorkflowID != wf.ID {
			t.Errorf("delivery %d: %+v with body %+v, want %+v of %s", i, g, body, want[i], wf.ID)
		}
	}
}
