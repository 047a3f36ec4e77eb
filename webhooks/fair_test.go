package webhooks_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/webhooks"
	"github.com/twostep/twostep/workflow"
)

// enqueue commits n due deliveries of a new workflow of user to url and
// returns the workflow's id.
func enqueue(t *testing.T, store *memstore.Store, user, url string, n int) string {
	t.Helper()
	ctx := context.Background()
	wf := &workflow.Workflow{ID: workflow.NewID(workflow.PrefixWorkflow), UserID: user, Mode: workflow.ModeReact,
		Status: workflow.StatusRunning, Round: 1, MaxSteps: 3}
	created, _, err := store.Commit(ctx, workflow.Commit{Workflow: wf})
	if err != nil {
		t.Fatal(err)
	}
	done := created.Clone()
	done.Status = workflow.StatusCompleted
	now := time.Now()
	var ds []workflow.WebhookDelivery
	for i := range n {
		ds = append(ds, workflow.WebhookDelivery{ID: fmt.Sprintf("msg_%s_%d", user, i), WorkflowID: wf.ID, UserID: user,
			Event: workflow.EventRoundCompleted, URL: url, Secret: "whsec_eA==", Body: []byte(`{}`), CreatedAt: now, NextAttempt: now})
	}
	if _, _, err := store.Commit(ctx, workflow.Commit{Workflow: done, ExpectedVersion: created.Version, Webhooks: ds}); err != nil {
		t.Fatal(err)
	}
	return wf.ID
}

// hanging is a receiver that answers only once release is closed (or the
// attempt is cut, which it counts).
type hanging struct {
	release chan struct{}
	cut     atomic.Int32
	got     atomic.Int32
}

func (h *hanging) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.ReadAll(r.Body) // so the server notices the client leaving
	h.got.Add(1)
	select {
	case <-h.release:
	case <-r.Context().Done():
		h.cut.Add(1)
	}
}

// TestOneUsersSlowReceiverDelaysNoOtherUser: sam's ten deliveries, older
// than ann's one, go to a receiver that hangs until ann's delivery
// arrives. Claimed in order, sam's would fill every attempt slot and
// ann's would wait for their timeouts; with users sharing the claim (at
// most two of sam's at once) ann's is attempted while sam's hang, and no
// attempt of sam's is cut.
func TestOneUsersSlowReceiverDelaysNoOtherUser(t *testing.T) {
	store := memstore.New()
	slow := &hanging{release: make(chan struct{})}
	slowSrv := httptest.NewServer(slow)
	defer slowSrv.Close()
	fast := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { close(slow.release) }))
	defer fast.Close()
	_ = enqueue(t, store, "sam", slowSrv.URL, 10)
	annWF := enqueue(t, store, "ann", fast.URL, 1)
	d := &webhooks.Deliverer{Outbox: store, AllowPrivate: true, Concurrency: 4, Timeout: 5 * time.Second}
	if n := d.RunOnce(context.Background()); n != 3 {
		t.Errorf("RunOnce claimed %d, want 3: two of sam's (the per-user cap) and ann's", n)
	}
	if n := slow.cut.Load(); n != 0 {
		t.Errorf("%d of sam's attempts were cut before ann's delivery arrived, want none", n)
	}
	list, _ := store.WebhookDeliveries(context.Background(), annWF)
	if len(list) != 1 || list[0].Status != workflow.DeliveryDelivered {
		t.Errorf("ann's deliveries = %+v, want delivered", list)
	}
}

// TestRunClaimsWhileAttemptsHang: Run claims a delivery as soon as a slot
// is free, not once the attempts already running end: sam's receiver
// hangs (one attempt at a time, the per-user cap) and ann's delivery,
// made while it hangs, is attempted meanwhile.
func TestRunClaimsWhileAttemptsHang(t *testing.T) {
	store := memstore.New()
	slow := &hanging{release: make(chan struct{})}
	slowSrv := httptest.NewServer(slow)
	defer slowSrv.Close()
	fastGot := make(chan struct{})
	fast := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { close(fastGot) }))
	defer fast.Close()
	_ = enqueue(t, store, "sam", slowSrv.URL, 3)
	ctx, cancel := context.WithCancel(context.Background())
	d := &webhooks.Deliverer{Outbox: store, AllowPrivate: true, Concurrency: 2, PerUser: 1, Poll: 5 * time.Millisecond, Timeout: time.Minute}
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx) }()
	waitUntil(t, "sam's first attempt", func() bool { return slow.got.Load() == 1 })
	_ = enqueue(t, store, "ann", fast.URL, 1)
	select {
	case <-fastGot:
	case <-time.After(30 * time.Second): // a broken build only: the attempt timeout is a minute
		t.Error("ann's delivery was not attempted while sam's attempt hung")
	}
	if n := slow.got.Load(); n != 1 {
		t.Errorf("sam's receiver got %d attempts at once, want 1 (PerUser)", n)
	}
	close(slow.release)
	cancel()
	<-done
}

// waitUntil polls cond until it holds (the deadline only keeps a broken
// build from hanging).
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestHangingReceiverHeaderTimeout: a receiver that accepts the request
// but never answers is given up after HeaderTimeout, not the attempt's
// whole Timeout, and the attempt says why.
func TestHangingReceiverHeaderTimeout(t *testing.T) {
	store := memstore.New()
	slow := &hanging{release: make(chan struct{})}
	srv := httptest.NewServer(slow)
	defer srv.Close()
	defer close(slow.release)
	id := enqueue(t, store, "sam", srv.URL, 1)
	d := &webhooks.Deliverer{Outbox: store, AllowPrivate: true, Timeout: time.Hour, Lease: 4 * time.Hour, HeaderTimeout: 50 * time.Millisecond}
	d.RunOnce(context.Background())
	list, _ := store.WebhookDeliveries(context.Background(), id)
	if len(list) != 1 || len(list[0].Attempts) != 1 || !strings.Contains(list[0].Attempts[0].Error, "awaiting response headers") {
		t.Errorf("deliveries = %+v, want one attempt timed out awaiting response headers", list)
	}
}
