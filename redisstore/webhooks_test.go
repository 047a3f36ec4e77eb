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
	ds, err := s.ClaimWebhooks(ctx, t0, time.Minute, 10, 0)
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

// TestPoisonedDeliveryStopsNoOther: a delivery record that no longer
// decodes, due before every other, is skipped: the claim still hands out
// the user's other deliveries and the next user's, reports the bad one,
// and stores it as failed with the decode error (no longer claimed, and
// listed with its workflow, which is still readable).
func TestPoisonedDeliveryStopsNoOther(t *testing.T) {
	t.Parallel()
	mr, s := newMini(t, redisstore.Options{KeyPrefix: "hp"})
	ctx := context.Background()
	t0 := time.Now().UTC().Truncate(time.Millisecond)
	bad := commitDeliveries(t, s, "ann", 1, t0.Add(-time.Second))
	commitDeliveries(t, s, "ann", 2, t0)
	commitDeliveries(t, s, "bob", 1, t0)
	commitDeliveries(t, s, "cid", 1, t0)
	ids, err := mr.HKeys("hp:{u:ann}:hooks")
	if err != nil {
		t.Fatal(err)
	}
	var badID string
	for _, id := range ids {
		if rec := mr.HGet("hp:{u:ann}:hooks", id); strings.Contains(rec, bad) {
			badID = id
			mr.HSet("hp:{u:ann}:hooks", id, strings.Replace(rec, `"body":"e30="`, `"body":5`, 1)) // a body no longer bytes
		}
	}
	ds, err := s.ClaimWebhooks(ctx, t0, time.Minute, 10, 0)
	if len(ds) != 4 || err == nil || !strings.Contains(err.Error(), badID) {
		t.Fatalf("ClaimWebhooks = %d deliveries, %v; want the 4 others and an error naming %s", len(ds), err, badID)
	}
	if strings.Contains(err.Error(), hookSecret) {
		t.Errorf("the error %v shows the secret", err)
	}
	list, err := s.WebhookDeliveries(ctx, bad)
	if err != nil || len(list) != 1 {
		t.Fatalf("WebhookDeliveries(%s) = %+v, %v; want the bad delivery", bad, list, err)
	}
	if got := list[0]; got.ID != badID || got.Status != workflow.DeliveryFailed || len(got.Attempts) != 1 ||
		!strings.Contains(got.Attempts[0].Error, "does not decode") {
		t.Errorf("the bad delivery is listed as %+v, want failed with the decode error", got)
	}
	if ds, err := s.ClaimWebhooks(ctx, t0.Add(time.Hour), time.Minute, 10, 0); len(ds) != 4 || err != nil {
		t.Errorf("after the leases ended: %d deliveries, %v; want the 4 good ones and no error", len(ds), err)
	}
}
