package redisstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twostep/twostep/redisstore"
	"github.com/twostep/twostep/workflow"
)

// hookSecret is the secret every delivery of these tests is signed with.
const hookSecret = "whsec_c2VjcmV0c2VjcmV0"

// commitDeliveries creates a workflow of user and ends its round with n
// deliveries due at due; it returns the workflow's id.
func commitDeliveries(t *testing.T, s *redisstore.Store, user string, n int, due time.Time) string {
	t.Helper()
	ctx := context.Background()
	created, _, err := s.Commit(ctx, workflow.Commit{Workflow: &workflow.Workflow{ID: workflow.NewID(workflow.PrefixWorkflow),
		UserID: user, Mode: workflow.ModeReact, Status: workflow.StatusRunning, Round: 1, MaxSteps: 3}})
	if err != nil {
		t.Fatal(err)
	}
	done := created.Clone()
	done.Status = workflow.StatusCompleted
	var ds []workflow.WebhookDelivery
	for range n {
		ds = append(ds, workflow.WebhookDelivery{ID: workflow.NewID("msg_"), WorkflowID: created.ID, UserID: user,
			Event: workflow.EventRoundCompleted, URL: "https://hooks.example/in", Secret: hookSecret, Body: []byte(`{}`),
			CreatedAt: due, NextAttempt: due, Status: workflow.DeliveryPending})
	}
	if _, _, err := s.Commit(ctx, workflow.Commit{Workflow: done, ExpectedVersion: created.Version, Webhooks: ds}); err != nil {
		t.Fatal(err)
	}
	return created.ID
}

// TestFinishedDeliveryKeepsNoSecret: a pending delivery keeps its secret
// (the next attempt signs with it); once delivered or failed for good,
// the record in Redis no longer holds it.
func TestFinishedDeliveryKeepsNoSecret(t *testing.T) {
	t.Parallel()
	mr, s := newMini(t, redisstore.Options{KeyPrefix: "hs"})
	ctx := context.Background()
	t0 := time.Now().UTC().Truncate(time.Millisecond)
	commitDeliveries(t, s, "ann", 3, t0)
	ds, err := s.ClaimWebhooks(ctx, t0, time.Minute, 10)
	if err != nil || len(ds) != 3 {
		t.Fatalf("ClaimWebhooks = %d deliveries, %v; want 3", len(ds), err)
	}
	ds[0].Status = workflow.DeliveryDelivered
	ds[0].Attempts = []workflow.WebhookAttempt{{At: t0, StatusCode: 204}}
	ds[1].Status = workflow.DeliveryFailed
	ds[1].Attempts = []workflow.WebhookAttempt{{At: t0, StatusCode: 500, Error: "HTTP 500"}}
	ds[2].NextAttempt = t0.Add(time.Minute) // still pending
	ds[2].Attempts = []workflow.WebhookAttempt{{At: t0, StatusCode: 503, Error: "HTTP 503"}}
	for _, d := range ds {
		if err := s.FinishWebhook(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	for i, d := range ds {
		rec := mr.HGet("hs:{u:ann}:hooks", d.ID)
		if rec == "" {
			t.Fatalf("no record of %s", d.ID)
		}
		if kept, want := strings.Contains(rec, hookSecret), i == 2; kept != want {
			t.Errorf("%s record %s: holds the secret %v, want %v", d.Status, rec, kept, want)
		}
	}
}
