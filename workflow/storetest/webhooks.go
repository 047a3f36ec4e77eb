package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/twostep/twostep/workflow"
)

// delivery returns a pending delivery of wf's event, due at due.
func delivery(wf *workflow.Workflow, due time.Time) workflow.WebhookDelivery {
	return workflow.WebhookDelivery{
		ID: workflow.NewID("msg_"), WorkflowID: wf.ID, UserID: wf.UserID, Event: workflow.EventRoundCompleted,
		URL: "https://hooks.example/in", Secret: "whsec_c2VjcmV0c2VjcmV0", Body: []byte(`{"type":"round.completed"}`),
		CreatedAt: due, NextAttempt: due, Status: workflow.DeliveryPending,
	}
}

// testWebhookOutbox follows deliveries through the outbox
// (workflow.WebhookOutbox): entered only by a commit that applies, leased to one claimer at a time, re-claimable when
// the lease ends (the old lease then refused), rescheduled, delivered and
// listed without their secret.
func testWebhookOutbox(t *testing.T, f Fixture) {
	ctx := context.Background()
	box, ok := f.Store.(workflow.WebhookOutbox)
	if !ok {
		t.Fatalf("%T is not a workflow.WebhookOutbox", f.Store)
	}
	t0 := time.Now().UTC().Truncate(time.Millisecond)
	sub := &workflow.WebhookSubscription{URL: "https://hooks.example/in", Events: []string{workflow.EventRoundCompleted}, Secret: "whsec_abc"}
	wf := newWorkflow("hook user {x}:y")
	created, _, err := f.Store.Commit(ctx, workflow.Commit{Workflow: wf, Webhook: sub})
	must(t, "Commit(create)", err)
	got, err := box.WebhookSubscription(ctx, created.ID)
	must(t, "WebhookSubscription", err)
	if got == nil || got.URL != sub.URL || got.Secret != sub.Secret || len(got.Events) != 1 {
		t.Fatalf("WebhookSubscription = %+v, want %+v", got, sub)
	}
	claim := func(when string, now time.Time, want int) []workflow.WebhookDelivery {
		t.Helper()
		ds, err := box.ClaimWebhooks(ctx, now, time.Minute, 10, 0)
		must(t, "ClaimWebhooks", err)
		if len(ds) != want {
			t.Fatalf("%s: ClaimWebhooks(t0%+v) gave %d deliveries, want %d", when, now.Sub(t0), len(ds), want)
		}
		return ds
	}

	// A commit without deliveries enters none.
	next := created.Clone()
	next.Step++
	stepped, _, err := f.Store.Commit(ctx, workflow.Commit{Workflow: next, ExpectedVersion: created.Version})
	must(t, "Commit(step)", err)
	claim("after a step", t0, 0)

	// A refused commit enters nothing; the one that applies does.
	done := stepped.Clone()
	done.Status, done.StopReason = workflow.StatusCompleted, workflow.StopCompleted
	want := delivery(created, t0)
	_, _, err = f.Store.Commit(ctx, workflow.Commit{Workflow: done.Clone(), ExpectedVersion: created.Version,
		Webhooks: []workflow.WebhookDelivery{delivery(created, t0)}})
	wantKind(t, "Commit(stale, with a delivery)", err, workflow.KindConflict)
	claim("after a refused commit", t0, 0)
	_, _, err = f.Store.Commit(ctx, workflow.Commit{Workflow: done, ExpectedVersion: stepped.Version,
		Webhooks: []workflow.WebhookDelivery{want}})
	must(t, "Commit(complete)", err)

	first := claim("due", t0, 1)[0]
	if first.ID != want.ID || string(first.Body) != string(want.Body) || first.Secret != want.Secret || first.Lease == "" {
		t.Fatalf("claimed %+v, want %+v with a lease", first, want)
	}
	claim("while leased", t0.Add(30*time.Second), 0)
	again := claim("after the lease ended", t0.Add(2*time.Minute), 1)[0]
	first.Attempts = []workflow.WebhookAttempt{{At: t0, StatusCode: 500, Error: "HTTP 500"}}
	first.NextAttempt = t0.Add(time.Hour)
	wantKind(t, "FinishWebhook(taken-over lease)", box.FinishWebhook(ctx, first), workflow.KindConflict)

	again.Attempts = []workflow.WebhookAttempt{{At: t0.Add(2 * time.Minute), StatusCode: 503, Error: "HTTP 503"}}
	again.NextAttempt = t0.Add(10 * time.Minute)
	must(t, "FinishWebhook(retry)", box.FinishWebhook(ctx, again))
	claim("before the retry is due", t0.Add(5*time.Minute), 0)
	retry := claim("retry due", t0.Add(11*time.Minute), 1)[0]
	if len(retry.Attempts) != 1 || retry.Attempts[0].StatusCode != 503 {
		t.Errorf("retry's attempts = %+v, want the one of 503", retry.Attempts)
	}
	retry.Attempts = append(retry.Attempts, workflow.WebhookAttempt{At: t0.Add(11 * time.Minute), StatusCode: 204})
	retry.Status, retry.NextAttempt = workflow.DeliveryDelivered, time.Time{}
	must(t, "FinishWebhook(delivered)", box.FinishWebhook(ctx, retry))
	claim("after delivery", t0.Add(48*time.Hour), 0)

	list, err := box.WebhookDeliveries(ctx, created.ID)
	must(t, "WebhookDeliveries", err)
	if len(list) != 1 || list[0].Status != workflow.DeliveryDelivered || len(list[0].Attempts) != 2 || list[0].Secret != "" {
		t.Fatalf("WebhookDeliveries = %+v, want one delivered delivery with 2 attempts and no secret", list)
	}
	other, err := box.WebhookDeliveries(ctx, newWorkflow("u").ID)
	must(t, "WebhookDeliveries(unknown)", err)
	if len(other) != 0 {
		t.Errorf("WebhookDeliveries(unknown) = %+v, want none", other)
	}

	// A commit that ends a round and starts a queued one leaves the
	// status running: the ended round's delivery is entered all the same.
	queued, _, err := f.Store.Commit(ctx, workflow.Commit{Workflow: newWorkflow("hook user {x}:y")})
	must(t, "Commit(create)", err)
	chained := queued.Clone()
	chained.Round++
	ended := delivery(queued, t0)
	_, _, err = f.Store.Commit(ctx, workflow.Commit{Workflow: chained, ExpectedVersion: queued.Version,
		Webhooks: []workflow.WebhookDelivery{ended}})
	must(t, "Commit(round ended, queued round started)", err)
	if got := claim("after a round ended into a queued one", t0.Add(48*time.Hour), 1)[0]; got.ID != ended.ID {
		t.Errorf("claimed %s, want %s", got.ID, ended.ID)
	}
}

// testWebhookClaimsConcurrent has four claimers take 24 due deliveries of
// three users at once: each is handed out exactly once.
func testWebhookClaimsConcurrent(t *testing.T, f Fixture) {
	ctx := context.Background()
	box := f.Store.(workflow.WebhookOutbox)
	t0 := time.Now().UTC().Truncate(time.Millisecond)
	want := map[string]bool{}
	for _, user := range []string{"u1", "u2", "u3"} {
		for range 4 {
			wf := newWorkflow(user)
			created, _, err := f.Store.Commit(ctx, workflow.Commit{Workflow: wf})
			must(t, "Commit(create)", err)
			done := created.Clone()
			done.Status = workflow.StatusFailed
			ds := []workflow.WebhookDelivery{delivery(created, t0), delivery(created, t0)}
			_, _, err = f.Store.Commit(ctx, workflow.Commit{Workflow: done, ExpectedVersion: created.Version, Webhooks: ds})
			must(t, "Commit(fail)", err)
			want[ds[0].ID], want[ds[1].ID] = true, true
		}
	}
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				ds, err := box.ClaimWebhooks(ctx, t0, time.Minute, 3, 0)
				if err != nil {
					t.Errorf("ClaimWebhooks: %v", err)
					return
				}
				if len(ds) == 0 {
					return
				}
				mu.Lock()
				for _, d := range ds {
					seen[d.ID]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for id := range want {
		if seen[id] != 1 {
			t.Errorf("delivery %s claimed %d times, want 1", id, seen[id])
		}
	}
	if len(seen) != len(want) {
		t.Errorf("claimed %d deliveries, want %d", len(seen), len(want))
	}
}

// testWebhookKeep: a delivery finished more than a week before another
// finishes is dropped; a newer one stays listable.
func testWebhookKeep(t *testing.T, f Fixture) {
	ctx := context.Background()
	box := f.Store.(workflow.WebhookOutbox)
	t0 := time.Now().UTC().Truncate(time.Millisecond)
	created, _, err := f.Store.Commit(ctx, workflow.Commit{Workflow: newWorkflow("keeper")})
	must(t, "Commit(create)", err)
	done := created.Clone()
	done.Status = workflow.StatusCompleted
	old, recent := delivery(created, t0), delivery(created, t0)
	_, _, err = f.Store.Commit(ctx, workflow.Commit{Workflow: done, ExpectedVersion: created.Version,
		Webhooks: []workflow.WebhookDelivery{old, recent}})
	must(t, "Commit(complete)", err)
	ds, err := box.ClaimWebhooks(ctx, t0, time.Minute, 10, 0)
	must(t, "ClaimWebhooks", err)
	if len(ds) != 2 {
		t.Fatalf("claimed %d deliveries, want 2", len(ds))
	}
	for i, at := range []time.Time{t0.Add(-8 * 24 * time.Hour), t0} {
		ds[i].Status = workflow.DeliveryDelivered
		ds[i].Attempts = []workflow.WebhookAttempt{{At: at, StatusCode: 200}}
		must(t, "FinishWebhook", box.FinishWebhook(ctx, ds[i]))
	}
	list, err := box.WebhookDeliveries(ctx, created.ID)
	must(t, "WebhookDeliveries", err)
	if len(list) != 1 || list[0].ID != ds[1].ID {
		t.Errorf("listed %+v, want only %s (the other finished 8 days before it)", list, ds[1].ID)
	}
}

// testWebhookDeletedWorkflow: deleting a workflow takes none of its
// deliveries back (at least once): a pending one is still claimed and
// delivered, and the workflow's deliveries stay listed by its id.
func testWebhookDeletedWorkflow(t *testing.T, f Fixture) {
	ctx := context.Background()
	box := f.Store.(workflow.WebhookOutbox)
	t0 := time.Now().UTC().Truncate(time.Millisecond)
	created, _, err := f.Store.Commit(ctx, workflow.Commit{Workflow: newWorkflow("deleter")})
	must(t, "Commit(create)", err)
	done := created.Clone()
	done.Status = workflow.StatusCompleted
	_, _, err = f.Store.Commit(ctx, workflow.Commit{Workflow: done, ExpectedVersion: created.Version,
		Webhooks: []workflow.WebhookDelivery{delivery(created, t0)}})
	must(t, "Commit(complete)", err)
	must(t, "DeleteWorkflow", f.Store.DeleteWorkflow(ctx, created.ID))

	ds, err := box.ClaimWebhooks(ctx, t0, time.Minute, 10, 0)
	must(t, "ClaimWebhooks", err)
	if len(ds) != 1 || ds[0].WorkflowID != created.ID {
		t.Fatalf("claimed %+v, want the deleted workflow's delivery", ds)
	}
	ds[0].Status = workflow.DeliveryDelivered
	ds[0].Attempts = []workflow.WebhookAttempt{{At: t0, StatusCode: 204}}
	must(t, "FinishWebhook", box.FinishWebhook(ctx, ds[0]))
	list, err := box.WebhookDeliveries(ctx, created.ID)
	must(t, "WebhookDeliveries", err)
	if len(list) != 1 || list[0].ID != ds[0].ID || list[0].Status != workflow.DeliveryDelivered {
		t.Errorf("WebhookDeliveries(deleted) = %+v, want its delivered delivery", list)
	}
}

// testWebhookClaimsShareUsers: a claim leases at most perUser deliveries
// of one user at once — counting those earlier claims leased and did not
// finish — and successive claims start with another user, so one user's
// backlog fills no claim: with five of u1's and two of u2's due, a claim
// of ten at two per user takes two of each; the next takes none until one
// finishes, then one of u1's; and claims of one take turns between users.
func testWebhookClaimsShareUsers(t *testing.T, f Fixture) {
	ctx := context.Background()
	box := f.Store.(workflow.WebhookOutbox)
	t0 := time.Now().UTC().Truncate(time.Millisecond)
	enqueue := func(user string, n int) {
		created, _, err := f.Store.Commit(ctx, workflow.Commit{Workflow: newWorkflow(user)})
		must(t, "Commit(create)", err)
		done := created.Clone()
		done.Status = workflow.StatusCompleted
		var ds []workflow.WebhookDelivery
		for range n {
			ds = append(ds, delivery(created, t0))
		}
		_, _, err = f.Store.Commit(ctx, workflow.Commit{Workflow: done, ExpectedVersion: created.Version, Webhooks: ds})
		must(t, "Commit(complete)", err)
	}
	enqueue("share u1", 5)
	enqueue("share u2", 2)
	byUser := func(ds []workflow.WebhookDelivery) map[string]int {
		out := map[string]int{}
		for _, d := range ds {
			out[d.UserID]++
		}
		return out
	}
	first, err := box.ClaimWebhooks(ctx, t0, time.Minute, 10, 2)
	must(t, "ClaimWebhooks", err)
	if got := byUser(first); len(first) != 4 || got["share u1"] != 2 || got["share u2"] != 2 {
		t.Fatalf("first claim took %v, want two of each user", got)
	}
	if again, err := box.ClaimWebhooks(ctx, t0.Add(time.Second), time.Minute, 10, 2); err != nil || len(again) != 0 {
		t.Fatalf("while two of each are leased: claimed %v, %v; want none", byUser(again), err)
	}
	for _, d := range first {
		if d.UserID == "share u1" {
			d.Status = workflow.DeliveryDelivered
			d.Attempts = []workflow.WebhookAttempt{{At: t0, StatusCode: 204}}
			must(t, "FinishWebhook", box.FinishWebhook(ctx, d))
			break
		}
	}
	next, err := box.ClaimWebhooks(ctx, t0.Add(time.Second), time.Minute, 10, 2)
	must(t, "ClaimWebhooks", err)
	if got := byUser(next); len(next) != 1 || got["share u1"] != 1 {
		t.Fatalf("after one of u1's finished: claimed %v, want one of u1's", got)
	}
	// Once every lease ended, claims of one at a time alternate users.
	later := t0.Add(2 * time.Minute)
	var order []string
	for i := range 4 {
		ds, err := box.ClaimWebhooks(ctx, later.Add(time.Duration(i)*time.Millisecond), time.Minute, 1, 0)
		must(t, "ClaimWebhooks", err)
		if len(ds) != 1 {
			t.Fatalf("claim %d of one took %d", i, len(ds))
		}
		order = append(order, ds[0].UserID)
	}
	for i := 1; i < len(order); i++ {
		if order[i] == order[i-1] {
			t.Errorf("claims of one took users %v, want them in turn", order)
			break
		}
	}
}
