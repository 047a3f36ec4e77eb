package memstore

import (
	"context"
	"testing"
	"time"

	"github.com/twostep/twostep/workflow"
)

// TestFinishedDeliveryKeepsNoSecret: once delivered or failed for good a
// delivery no longer keeps its secret; a pending one does (its next
// attempt signs with it).
func TestFinishedDeliveryKeepsNoSecret(t *testing.T) {
	ctx := context.Background()
	s := New()
	created, _, err := s.Commit(ctx, workflow.Commit{Workflow: &workflow.Workflow{ID: workflow.NewID(workflow.PrefixWorkflow),
		UserID: "ann", Mode: workflow.ModeReact, Status: workflow.StatusRunning, Round: 1, MaxSteps: 3}})
	if err != nil {
		t.Fatal(err)
	}
	done := created.Clone()
	done.Status = workflow.StatusCompleted
	t0 := time.Now()
	var ds []workflow.WebhookDelivery
	for range 3 {
		ds = append(ds, workflow.WebhookDelivery{ID: workflow.NewID("msg_"), WorkflowID: created.ID, UserID: "ann",
			Event: workflow.EventRoundCompleted, URL: "https://hooks.example/in", Secret: "whsec_eA==", Body: []byte(`{}`),
			CreatedAt: t0, NextAttempt: t0})
	}
	if _, _, err := s.Commit(ctx, workflow.Commit{Workflow: done, ExpectedVersion: created.Version, Webhooks: ds}); err != nil {
		t.Fatal(err)
	}
	claimed, err := s.ClaimWebhooks(ctx, t0, time.Minute, 10, 0)
	if err != nil || len(claimed) != 3 {
		t.Fatalf("ClaimWebhooks = %d, %v; want 3", len(claimed), err)
	}
	claimed[0].Status, claimed[1].Status = workflow.DeliveryDelivered, workflow.DeliveryFailed
	claimed[2].NextAttempt = t0.Add(time.Minute)
	for _, d := range claimed {
		d.Attempts = []workflow.WebhookAttempt{{At: t0, StatusCode: 500}}
		if err := s.FinishWebhook(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	for i, d := range claimed {
		if kept, want := s.hooks[d.ID].d.Secret != "", i == 2; kept != want {
			t.Errorf("%s delivery keeps its secret: %v, want %v", d.Status, kept, want)
		}
	}
}
