package test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twostep/twostep/client"
)

// hookReceiver is a webhook receiver of the test's own. It checks every
// delivery's signature with the Standard Webhooks algorithm, written here
// from the specification (not the gateway's code), answers 500 to the
// first failFirst attempts of each webhook-id and 204 after, and counts
// the accepted deliveries per webhook-id and event.
type hookReceiver struct {
	t         *testing.T
	secrets   map[string]string // path -> secret ("" until the create answers)
	failFirst int

	mu       sync.Mutex
	attempts map[string]int
	accepted map[string][]string // webhook-id -> "path event" accepted
	failed   chan string         // each failed attempt's webhook-id
}

func newHookReceiver(t *testing.T, failFirst int) (*hookReceiver, *httptest.Server) {
	rc := &hookReceiver{t: t, secrets: map[string]string{}, failFirst: failFirst, attempts: map[string]int{},
		accepted: map[string][]string{}, failed: make(chan string, 100)}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	return rc, srv
}

// specSignature is the specification's signature: base64 of HMAC-SHA256,
// keyed with the base64-decoded part of "whsec_<base64>", of
// "<id>.<timestamp>.<body>".
func specSignature(secret, id, ts string, body []byte) string {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		key = []byte(secret)
	}
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%s.%s.%s", id, ts, body)
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

func (rc *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	id, ts := r.Header.Get("webhook-id"), r.Header.Get("webhook-timestamp")
	rc.mu.Lock()
	defer rc.mu.Unlock()
	secret := rc.secrets[r.URL.Path]
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || time.Since(time.Unix(sec, 0)).Abs() > 5*time.Minute {
		rc.t.Errorf("delivery %s: webhook-timestamp %q is not now", id, ts)
	}
	ok := false
	for _, s := range strings.Fields(r.Header.Get("webhook-signature")) {
		if v, sig, _ := strings.Cut(s, ","); v == "v1" && hmac.Equal([]byte(sig), []byte(specSignature(secret, id, ts, body))) {
			ok = true
		}
	}
	if !ok || id == "" {
		rc.t.Errorf("delivery %q to %s: signature %q does not verify", id, r.URL.Path, r.Header.Get("webhook-signature"))
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	rc.attempts[id]++
	if rc.attempts[id] <= rc.failFirst {
		w.WriteHeader(http.StatusInternalServerError)
		rc.failed <- id
		return
	}
	var ev struct {
		Type string `json:"type"`
		Data struct {
			Workflow struct {
				ID     string `json:"id"`
				Status string `json:"status"`
			} `json:"workflow"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &ev); err != nil || ev.Data.Workflow.ID == "" {
		rc.t.Errorf("delivery %s: body %s is not {type, timestamp, data: {workflow}}", id, body)
	}
	rc.accepted[id] = append(rc.accepted[id], r.URL.Path+" "+ev.Type+" "+ev.Data.Workflow.ID)
	w.WriteHeader(http.StatusNoContent)
}

// TestWebhooksSurviveTheDeliveringInstance (Redis, two instances): a
// workflow's own webhook and a standing one receive round.completed; the
// receiver fails the first 3 attempts of each. The instance that made the
// first attempts is killed with SIGKILL between attempts, just after a
// second instance started; the second delivers the rest: exactly one accepted
// delivery per subscription and event, every signature valid, and the
// admin route lists the attempts.
func TestWebhooksSurviveTheDeliveringInstance(t *testing.T) {
	t.Parallel()
	testWebhooksSurviveTheDeliveringInstance(t, redisURL(t))
}

// TestWebhooksSurviveTheDeliveringInstanceOnCluster is the same on the
// Redis Cluster at REDIS_CLUSTER_URL: the outbox and its index work across
// shards.
func TestWebhooksSurviveTheDeliveringInstanceOnCluster(t *testing.T) {
	t.Parallel()
	testWebhooksSurviveTheDeliveringInstance(t, clusterURL(t))
}

func testWebhooksSurviveTheDeliveringInstance(t *testing.T, url string) {
	rc, srv := newHookReceiver(t, 3)
	standingSecret := "whsec_" + base64.StdEncoding.EncodeToString([]byte("standing-secret-of-the-test-0123"))
	rc.secrets["/standing"] = standingSecret
	conf := filepath.Join(t.TempDir(), "gateway.yaml")
	yaml := fmt.Sprintf(`limits:
  leaseTTL: 1s
webhooks:
  allowPrivate: true
  firstRetry: 300ms
  poll: 100ms
  lease: 2s
  standing:
    - user: alice
      url: %s/standing
      events: [round.completed]
      secret: ${E2E_STANDING_SECRET}
`, srv.URL)
	if err := os.WriteFile(conf, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"REDIS_URL=" + url, "GATEWAY_CONFIG=" + conf, "E2E_STANDING_SECRET=" + standingSecret}
	model := newFakeLLM(t)
	victim := launch(t, model, env...)
	waitHealthy(t, victim)
	var wf struct {
		ID            string `json:"id"`
		WebhookSecret string `json:"webhookSecret"`
	}
	rc.mu.Lock()
	res, err := victim.client(t, gwAlice).Create(context.Background(), client.CreateRequest{Prompt: "hooked1 go",
		Webhook: &client.Webhook{URL: srv.URL + "/own", Events: []string{"round.completed", "round.failed"}}})
	if err != nil {
		rc.mu.Unlock()
		t.Fatal(err)
	}
	wf.ID, wf.WebhookSecret = res.ID, res.WebhookSecret
	rc.secrets["/own"] = wf.WebhookSecret
	rc.mu.Unlock()
	if !strings.HasPrefix(wf.WebhookSecret, "whsec_") {
		t.Fatalf("webhookSecret = %q, want whsec_...", wf.WebhookSecret)
	}
	// Both deliveries failed once (the victim delivered them): kill it
	// between attempts.
	for range 2 {
		select {
		case <-rc.failed:
		case <-time.After(30 * time.Second):
			t.Fatalf("no delivery attempt came:\n%s", victim.stderr)
		}
	}
	// ... once it recorded them (killed mid-attempt, it would leave the
	// attempt to be made again when its lease ends: at least once).
	for recorded := false; !recorded; {
		var l deliveryList
		victim.expect(t, http.StatusOK, "GET", "/admin/v1/webhooks/deliveries?workflow="+wf.ID, gwAdmin, nil, &l)
		recorded = len(l.Deliveries) == 2 && len(l.Deliveries[0].Attempts) > 0 && len(l.Deliveries[1].Attempts) > 0
		time.Sleep(10 * time.Millisecond)
	}
	// The second instance runs beside the first for a moment: the
	// outbox's lease keeps them from making the same attempt twice.
	survivor := startGateway(t, model, env...)
	if err := victim.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-victim.done
	deadline := time.Now().Add(60 * time.Second)
	for {
		rc.mu.Lock()
		n := len(rc.accepted)
		rc.mu.Unlock()
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("accepted %v after a minute:\n%s", rc.accepted, survivor.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(time.Second) // room for a duplicate to show
	rc.mu.Lock()
	for id, got := range rc.accepted {
		if len(got) != 1 {
			t.Errorf("delivery %s accepted %d times: %v", id, len(got), got)
		}
	}
	paths := map[string]bool{}
	for _, got := range rc.accepted {
		paths[got[0]] = true
	}
	rc.mu.Unlock()
	for _, p := range []string{"/own", "/standing"} {
		if !paths[p+" round.completed "+wf.ID] {
			t.Errorf("no accepted round.completed of %s at %s: %v", wf.ID, p, paths)
		}
	}
	var list deliveryList
	survivor.expect(t, http.StatusOK, "GET", "/admin/v1/webhooks/deliveries?workflow="+wf.ID, gwAdmin, nil, &list)
	if len(list.Deliveries) != 2 {
		t.Fatalf("deliveries listed: %+v", list)
	}
	for _, d := range list.Deliveries {
		n := len(d.Attempts)
		if d.Status != "delivered" || n < 4 || d.Attempts[0].ResponseCode != 500 || d.Attempts[n-1].ResponseCode != 204 {
			t.Errorf("delivery %s: %+v, want delivered after three 500s", d.ID, d)
		}
	}
	t.Logf("attempts per delivery: %v", rc.attempts)
}

// deliveryList is GET /admin/v1/webhooks/deliveries's answer.
type deliveryList struct {
	Deliveries []struct {
		ID       string `json:"id"`
		Status   string `json:"status"`
		Attempts []struct {
			ResponseCode int `json:"responseCode"`
		} `json:"attempts"`
	} `json:"deliveries"`
}

// TestWebhookPrivateAddressRefused: without webhooks.allowPrivate a
// loopback webhook URL is refused at create with 422, and nothing is made.
func TestWebhookPrivateAddressRefused(t *testing.T) {
	t.Parallel()
	g := startGateway(t, newFakeLLM(t))
	status, _, body := g.send(t, "POST", "/api/v1/workflows", gwAlice, map[string]any{
		"prompt": "never", "webhook": map[string]any{"url": "http://127.0.0.1:9/hook"},
	})
	if status != http.StatusUnprocessableEntity || !strings.Contains(string(body), "private or loopback") {
		t.Fatalf("create with a loopback webhook: %d %s, want 422", status, body)
	}
	var list struct {
		Workflows []any `json:"workflows"`
	}
	g.expect(t, http.StatusOK, "GET", "/api/v1/workflows", gwAlice, nil, &list)
	if len(list.Workflows) != 0 {
		t.Errorf("workflows after the refused create: %+v", list.Workflows)
	}
}
