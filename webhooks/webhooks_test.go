package webhooks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twostep/twostep/client"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/webhooks"
	"github.com/twostep/twostep/workflow"
)

// The example of the Standard Webhooks specification's reference
// libraries (standard-webhooks/standard-webhooks, libraries' tests).
func TestSignMatchesTheSpecificationExample(t *testing.T) {
	got := webhooks.Sign("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330,
		[]byte(`{"test": 2432232314}`))
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Errorf("Sign = %q, want %q", got, want)
	}
}

func TestCheckURL(t *testing.T) {
	tests := []struct {
		url          string
		allowPrivate bool
		ok           bool
	}{
		{"https://hooks.example.com/in", false, true},
		{"http://203.0.113.9:8080/x", false, false}, // documentation (TEST-NET-3)
		{"http://127.0.0.1:9/x", false, false},
		{"http://localhost/x", false, false},
		{"http://api.localhost/x", false, false},
		{"http://10.1.2.3/x", false, false},
		{"http://192.168.0.1/x", false, false},
		{"http://169.254.169.254/latest", false, false},
		{"http://[::1]/x", false, false},
		{"http://[::ffff:127.0.0.1]/x", false, false},
		{"http://0.0.0.0/x", false, false},
		{"http://192.0.2.10/x", false, false},        // documentation
		{"http://198.18.0.1/x", false, false},        // benchmarking
		{"http://198.19.255.254/x", false, false},    // benchmarking
		{"http://240.0.0.1/x", false, false},         // reserved
		{"http://255.255.255.255/x", false, false},   // limited broadcast
		{"http://192.0.0.8/x", false, false},         // IETF protocol assignments
		{"http://[::127.0.0.1]/x", false, false},     // IPv4-compatible IPv6
		{"http://[64:ff9b::7f00:1]/x", false, false}, // NAT64
		{"http://[2001:db8::1]/x", false, false},     // documentation
		{"http://[2002:7f00:1::]/x", false, false},   // 6to4
		{"http://[fd00::1]/x", false, false},         // unique local
		{"http://[fe80::1%25eth0]/x", false, false},
		{"http://[2606:4700::1111]/x", false, true},
		{"http://1.1.1.1/x", false, true},
		{"http://127.0.0.1:9/x", true, true},
		{"ftp://hooks.example.com/", false, false},
		{"https://user:pw@hooks.example.com/", false, false},
		{"/relative", false, false},
	}
	for _, tc := range tests {
		err := webhooks.CheckURL(tc.url, tc.allowPrivate)
		if (err == nil) != tc.ok {
			t.Errorf("CheckURL(%q, %v) = %v, want ok=%v", tc.url, tc.allowPrivate, err, tc.ok)
		}
	}
}

// receiver is a webhook receiver that answers 500 to the first fail
// deliveries and checks every signature with client.VerifyWebhook.
type receiver struct {
	t      *testing.T
	secret string
	fail   int

	mu       sync.Mutex
	calls    int
	accepted map[string][]string // webhook-id -> the bodies' types accepted
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if err := client.VerifyWebhook(rc.secret, r.Header, body); err != nil {
		rc.t.Errorf("delivery %s: %v", r.Header.Get("webhook-id"), err)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.calls++
	if rc.calls <= rc.fail {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	var ev client.WebhookEvent
	if err := json.Unmarshal(body, &ev); err != nil {
		rc.t.Errorf("body %s: %v", body, err)
	}
	rc.accepted[r.Header.Get("webhook-id")] = append(rc.accepted[r.Header.Get("webhook-id")], ev.Type)
	w.WriteHeader(http.StatusNoContent)
}

// TestDeliveryRetriesUntilAccepted: a receiver that fails three times
// gets the event a fourth time, accepts it, and the outbox lists the four
// attempts; the deliverer never posts before a retry is due.
func TestDeliveryRetriesUntilAccepted(t *testing.T) {
	ctx := context.Background()
	store := memstore.New()
	secret := webhooks.NewSecret()
	rc := &receiver{t: t, secret: secret, fail: 3, accepted: map[string][]string{}}
	srv := httptest.NewServer(rc)
	defer srv.Close()

	now := time.Now()
	clock := func() time.Time { return now }
	src := &webhooks.Source{Subscriptions: store, View: func(w *workflow.Workflow) any { return map[string]any{"id": w.ID, "status": w.Status} }, Now: clock}
	wf := &workflow.Workflow{ID: workflow.NewID(workflow.PrefixWorkflow), UserID: "ann", Mode: workflow.ModeReact,
		Status: workflow.StatusRunning, Round: 1, MaxSteps: 3}
	created, _, err := store.Commit(ctx, workflow.Commit{Workflow: wf,
		Webhook: &workflow.WebhookSubscription{URL: srv.URL, Secret: secret}})
	if err != nil {
		t.Fatal(err)
	}
	done := created.Clone()
	done.Status = workflow.StatusCompleted
	ds, err := src.Deliveries(ctx, workflow.EventRoundCompleted, done)
	if err != nil || len(ds) != 1 {
		t.Fatalf("Deliveries = %v, %v; want one", ds, err)
	}
	if _, _, err := store.Commit(ctx, workflow.Commit{Workflow: done, ExpectedVersion: created.Version, Webhooks: ds}); err != nil {
		t.Fatal(err)
	}

	d := &webhooks.Deliverer{Outbox: store, AllowPrivate: true, FirstRetry: 30 * time.Second, Now: clock}
	waits := []time.Duration{0, 30 * time.Second, time.Minute, 2 * time.Minute} // within the receiver's tolerance
	for i, wait := range waits {
		now = now.Add(wait - time.Second)
		if n := d.RunOnce(ctx); n != 0 && wait > 0 {
			t.Fatalf("attempt %d: claimed %d deliveries a second before the retry is due", i+1, n)
		}
		now = now.Add(time.Second)
		if n := d.RunOnce(ctx); n != 1 {
			t.Fatalf("attempt %d: claimed %d deliveries, want 1", i+1, n)
		}
	}
	now = now.Add(48 * time.Hour)
	if n := d.RunOnce(ctx); n != 0 {
		t.Errorf("after the 2xx: claimed %d deliveries, want none", n)
	}
	if len(rc.accepted) != 1 || len(rc.accepted[ds[0].ID]) != 1 || rc.accepted[ds[0].ID][0] != workflow.EventRoundCompleted {
		t.Errorf("accepted %v, want one %s under %s", rc.accepted, workflow.EventRoundCompleted, ds[0].ID)
	}
	list, err := store.WebhookDeliveries(ctx, created.ID)
	if err != nil || len(list) != 1 {
		t.Fatalf("WebhookDeliveries = %v, %v", list, err)
	}
	var codes []int
	for _, a := range list[0].Attempts {
		codes = append(codes, a.StatusCode)
	}
	if got := list[0]; got.Status != workflow.DeliveryDelivered || len(codes) != 4 || codes[0] != 500 || codes[3] != 204 {
		t.Errorf("delivery %s with attempts %v, want delivered after 500, 500, 500, 204", got.Status, codes)
	}
}

// TestDeliveryRefusesPrivateAddresses: without allowPrivate the dialer
// refuses a loopback receiver, and the attempt records why.
func TestDeliveryRefusesPrivateAddresses(t *testing.T) {
	ctx := context.Background()
	store := memstore.New()
	hit := false
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hit = true }))
	defer srv.Close()
	wf := &workflow.Workflow{ID: workflow.NewID(workflow.PrefixWorkflow), UserID: "ann", Mode: workflow.ModeReact,
		Status: workflow.StatusRunning, Round: 1, MaxSteps: 3}
	created, _, err := store.Commit(ctx, workflow.Commit{Workflow: wf})
	if err != nil {
		t.Fatal(err)
	}
	done := created.Clone()
	done.Status = workflow.StatusFailed
	dv := workflow.WebhookDelivery{ID: "msg_1", WorkflowID: wf.ID, UserID: "ann", Event: workflow.EventRoundFailed,
		URL: srv.URL, Secret: "whsec_eA==", Body: []byte(`{}`), CreatedAt: time.Now(), NextAttempt: time.Now()}
	if _, _, err := store.Commit(ctx, workflow.Commit{Workflow: done, ExpectedVersion: created.Version,
		Webhooks: []workflow.WebhookDelivery{dv}}); err != nil {
		t.Fatal(err)
	}
	(&webhooks.Deliverer{Outbox: store}).RunOnce(ctx)
	list, _ := store.WebhookDeliveries(ctx, wf.ID)
	if hit || len(list) != 1 || len(list[0].Attempts) != 1 || !strings.Contains(list[0].Attempts[0].Error, "private or loopback") {
		t.Errorf("receiver hit %v, deliveries %+v; want one refused attempt", hit, list)
	}
}

// TestAttemptsEndWithinTheirLease: with a receiver that takes a second an
// answer and a 4 s lease (so a 2 s timeout), one batch attempts only the
// deliveries whose lease still covers a whole attempt; the others wait for
// their lease to end and are attempted by the next claim, each once.
// Attempts run one at a time here, so each next one starts later.
func TestAttemptsEndWithinTheirLease(t *testing.T) {
	ctx := context.Background()
	store := memstore.New()
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	posts := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(time.Second) // a slow receiver
		posts[r.Header.Get("webhook-id")]++
	}))
	defer srv.Close()
	wf := &workflow.Workflow{ID: workflow.NewID(workflow.PrefixWorkflow), UserID: "ann", Mode: workflow.ModeReact,
		Status: workflow.StatusRunning, Round: 1, MaxSteps: 3}
	created, _, err := store.Commit(ctx, workflow.Commit{Workflow: wf})
	if err != nil {
		t.Fatal(err)
	}
	done := created.Clone()
	done.Status = workflow.StatusCompleted
	var ds []workflow.WebhookDelivery
	for i := range 5 {
		ds = append(ds, workflow.WebhookDelivery{ID: fmt.Sprintf("msg_%d", i), WorkflowID: wf.ID, UserID: "ann",
			Event: workflow.EventRoundCompleted, URL: srv.URL, Secret: "whsec_eA==", Body: []byte(`{}`), CreatedAt: now, NextAttempt: now})
	}
	if _, _, err := store.Commit(ctx, workflow.Commit{Workflow: done, ExpectedVersion: created.Version, Webhooks: ds}); err != nil {
		t.Fatal(err)
	}
	d := &webhooks.Deliverer{Outbox: store, AllowPrivate: true, Lease: 4 * time.Second, Now: clock, Concurrency: 1, PerUser: 5}
	if n := d.RunOnce(ctx); n != 5 || len(posts) != 3 {
		t.Fatalf("first batch claimed %d and posted %d, want 5 claimed, 3 posted (the lease left no room for more)", n, len(posts))
	}
	if n := d.RunOnce(ctx); n != 0 {
		t.Fatalf("claimed %d deliveries still leased, want none", n)
	}
	mu.Lock()
	now = now.Add(2 * time.Second) // the first claim's lease ended
	mu.Unlock()
	if n := d.RunOnce(ctx); n != 2 {
		t.Fatalf("second batch claimed %d, want the 2 left", n)
	}
	for _, dv := range ds {
		if posts[dv.ID] != 1 {
			t.Errorf("%s posted %d times, want once", dv.ID, posts[dv.ID])
		}
	}
}

// partialOutbox is an outbox whose claim leased some deliveries and then
// failed (one cluster shard down): it returns those with the error.
type partialOutbox struct {
	workflow.WebhookOutbox
	claimed  []workflow.WebhookDelivery
	finished []workflow.WebhookDelivery
}

func (o *partialOutbox) ClaimWebhooks(context.Context, time.Time, time.Duration, int, int) ([]workflow.WebhookDelivery, error) {
	ds := o.claimed
	o.claimed = nil
	return ds, fmt.Errorf("redisstore.ClaimWebhooks: %w", workflow.Errorf(workflow.KindUnavailable, "a shard is down"))
}

func (o *partialOutbox) FinishWebhook(_ context.Context, d workflow.WebhookDelivery) error {
	o.finished = append(o.finished, d)
	return nil
}

// TestPartialClaimIsAttempted: the deliveries a claim leased before it
// failed on another user's slot are attempted now, not left leased and
// unattempted until their lease ends (each poll would do it again).
func TestPartialClaimIsAttempted(t *testing.T) {
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { posts.Add(1) }))
	defer srv.Close()
	now := time.Now()
	box := &partialOutbox{claimed: []workflow.WebhookDelivery{{ID: "msg_1", WorkflowID: "wf_1", UserID: "ann",
		Event: workflow.EventRoundCompleted, URL: srv.URL, Secret: "whsec_eA==", Body: []byte(`{}`), CreatedAt: now,
		NextAttempt: now, Status: workflow.DeliveryPending, Lease: "l1"}}}
	d := &webhooks.Deliverer{Outbox: box, AllowPrivate: true}
	if n := d.RunOnce(context.Background()); n != 1 {
		t.Errorf("RunOnce = %d, want the 1 delivery claimed before the failure", n)
	}
	if n := posts.Load(); n != 1 || len(box.finished) != 1 || box.finished[0].Status != workflow.DeliveryDelivered {
		t.Errorf("posted %d times and finished %+v, want the delivery posted once and delivered", n, box.finished)
	}
}

// TestShutdownCutsNoAttempt: an attempt cut by the deliverer's own
// shutdown is no failed attempt: nothing is recorded, so a delivery
// past its retry window is not given up for it, and it is attempted
// again once its lease ends.
func TestShutdownCutsNoAttempt(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body) // so the server notices the client leaving
		cancel()                  // the instance shuts down while the receiver answers
		<-r.Context().Done()
	}))
	defer srv.Close()
	store := memstore.New()
	wf := &workflow.Workflow{ID: workflow.NewID(workflow.PrefixWorkflow), UserID: "ann", Mode: workflow.ModeReact,
		Status: workflow.StatusRunning, Round: 1, MaxSteps: 3}
	created, _, err := store.Commit(context.Background(), workflow.Commit{Workflow: wf})
	if err != nil {
		t.Fatal(err)
	}
	done := created.Clone()
	done.Status = workflow.StatusCompleted
	old := time.Now().Add(-25 * time.Hour) // its retry window is over: the next failed attempt is the last
	dv := workflow.WebhookDelivery{ID: "msg_1", WorkflowID: wf.ID, UserID: "ann", Event: workflow.EventRoundCompleted,
		URL: srv.URL, Secret: "whsec_eA==", Body: []byte(`{}`), CreatedAt: old, NextAttempt: old}
	if _, _, err := store.Commit(context.Background(), workflow.Commit{Workflow: done, ExpectedVersion: created.Version,
		Webhooks: []workflow.WebhookDelivery{dv}}); err != nil {
		t.Fatal(err)
	}
	d := &webhooks.Deliverer{Outbox: store, AllowPrivate: true}
	if n := d.RunOnce(ctx); n != 1 {
		t.Fatalf("RunOnce = %d, want 1", n)
	}
	list, err := store.WebhookDeliveries(context.Background(), wf.ID)
	if err != nil || len(list) != 1 {
		t.Fatalf("WebhookDeliveries = %+v, %v", list, err)
	}
	if got := list[0]; got.Status != workflow.DeliveryPending || len(got.Attempts) != 0 {
		t.Errorf("after a cut attempt: %s with attempts %+v, want pending with none", got.Status, got.Attempts)
	}
}

// TestSlowReceiverDelaysNoOther: the batch's first delivery goes to a
// receiver that hangs until it sees the second delivery arrive at another
// receiver (or its request is cut). Attempts made one after another would
// leave the second waiting for the first's timeout; in parallel the fast
// receiver gets its delivery while the slow one's request is still open,
// and both end delivered.
func TestSlowReceiverDelaysNoOther(t *testing.T) {
	ctx := context.Background()
	store := memstore.New()
	fastGot := make(chan struct{})
	var releasedByFast atomic.Bool
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body) // so the server notices the client leaving
		select {
		case <-fastGot:
			releasedByFast.Store(true)
		case <-r.Context().Done(): // the attempt's timeout: the fast one waited for it
		}
	}))
	defer slow.Close()
	fast := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { close(fastGot) }))
	defer fast.Close()
	wf := &workflow.Workflow{ID: workflow.NewID(workflow.PrefixWorkflow), UserID: "ann", Mode: workflow.ModeReact,
		Status: workflow.StatusRunning, Round: 1, MaxSteps: 3}
	created, _, err := store.Commit(ctx, workflow.Commit{Workflow: wf})
	if err != nil {
		t.Fatal(err)
	}
	done := created.Clone()
	done.Status = workflow.StatusCompleted
	now := time.Now()
	var ds []workflow.WebhookDelivery
	for i, u := range []string{slow.URL, fast.URL} { // the slow one first: a serial batch posts it first
		ds = append(ds, workflow.WebhookDelivery{ID: fmt.Sprintf("msg_%d", i), WorkflowID: wf.ID, UserID: "ann",
			Event: workflow.EventRoundCompleted, URL: u, Secret: "whsec_eA==", Body: []byte(`{}`), CreatedAt: now, NextAttempt: now})
	}
	if _, _, err := store.Commit(ctx, workflow.Commit{Workflow: done, ExpectedVersion: created.Version, Webhooks: ds}); err != nil {
		t.Fatal(err)
	}
	d := &webhooks.Deliverer{Outbox: store, AllowPrivate: true, Timeout: 3 * time.Second}
	if n := d.RunOnce(ctx); n != 2 {
		t.Fatalf("RunOnce = %d, want 2", n)
	}
	if !releasedByFast.Load() {
		t.Error("the fast receiver got its delivery only after the slow one's request was cut, want while it was open")
	}
	list, err := store.WebhookDeliveries(ctx, wf.ID)
	if err != nil || len(list) != 2 {
		t.Fatalf("WebhookDeliveries = %+v, %v", list, err)
	}
	for _, got := range list {
		if got.Status != workflow.DeliveryDelivered {
			t.Errorf("%s: %s with attempts %+v, want delivered", got.ID, got.Status, got.Attempts)
		}
	}
}

// subs is a fixed Source.Subscriptions.
type subs map[string]*workflow.WebhookSubscription

func (s subs) WebhookSubscription(_ context.Context, id string) (*workflow.WebhookSubscription, error) {
	return s[id], nil
}

// TestSourceRendersEachFormat: a subscription with a Format gets the
// body its renderer makes, signed with its own secret; a standing one
// beside it keeps the gateway's body.
func TestSourceRendersEachFormat(t *testing.T) {
	t.Parallel()
	wf := &workflow.Workflow{ID: "wf_1", UserID: "alice", Status: workflow.StatusCompleted}
	src := &webhooks.Source{
		Subscriptions: subs{"wf_1": {URL: "https://a2a.example/in", Secret: "token-of-the-caller", Format: workflow.WebhookFormatA2A}},
		Standing:      []webhooks.Standing{{Sub: workflow.WebhookSubscription{URL: "https://audit.example/in", Secret: "s"}}},
		View:          func(w *workflow.Workflow) any { return w.ID },
		Bodies: map[string]func(string, *workflow.Workflow) ([]byte, error){
			workflow.WebhookFormatA2A: func(event string, w *workflow.Workflow) ([]byte, error) {
				return []byte("a2a " + event + " " + w.ID), nil
			},
		},
	}
	ds, err := src.Deliveries(context.Background(), workflow.EventRoundCompleted, wf)
	if err != nil || len(ds) != 2 {
		t.Fatalf("deliveries %+v (%v)", ds, err)
	}
	if string(ds[0].Body) != "a2a round.completed wf_1" || ds[0].Secret != "token-of-the-caller" {
		t.Errorf("the a2a delivery: %s", ds[0].Body)
	}
	if !strings.Contains(string(ds[1].Body), `"type":"round.completed"`) || !strings.Contains(string(ds[1].Body), `"workflow":"wf_1"`) {
		t.Errorf("the standing delivery: %s", ds[1].Body)
	}
}
