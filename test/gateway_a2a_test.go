package test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// a2aSDK returns the node_modules folder holding the official A2A client
// (@a2a-js/sdk, pinned by .ci/run); it skips without one (and node), but
// fails when CI is set.
func a2aSDK(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("TWOSTEP_A2A_SDK")
	_, nodeErr := exec.LookPath("node")
	if dir == "" || nodeErr != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("CI needs node and TWOSTEP_A2A_SDK (a node_modules folder with @a2a-js/sdk; .ci/run installs it)")
		}
		t.Skip("set TWOSTEP_A2A_SDK to a node_modules folder with @a2a-js/sdk (and have node) to run")
	}
	return dir
}

// a2aPushToken signs the push notifications the test asks for (not
// whsec_: its bytes are the key).
const a2aPushToken = "a2a-push-token-of-the-e2e-test"

// pushReceiver takes A2A push notifications: each must carry a Standard
// Webhooks signature made with the config's token (checked here from the
// specification, not the gateway's code) and an A2A StreamResponse body.
type pushReceiver struct {
	t    *testing.T
	mu   sync.Mutex
	got  map[string]string // task id -> state of its status update
	seen chan struct{}
}

func (p *pushReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	id, ts := r.Header.Get("webhook-id"), r.Header.Get("webhook-timestamp")
	mac := hmac.New(sha256.New, []byte(a2aPushToken))
	fmt.Fprintf(mac, "%s.%s.%s", id, ts, body)
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	if !strings.Contains(" "+r.Header.Get("webhook-signature")+" ", " "+want+" ") {
		p.t.Errorf("push %s: signature %q does not verify with the token", id, r.Header.Get("webhook-signature"))
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var ev struct {
		StatusUpdate struct {
			TaskID string
			Status struct{ State string }
		}
	}
	if err := json.Unmarshal(body, &ev); err != nil || ev.StatusUpdate.TaskID == "" {
		p.t.Errorf("push %s: body %s is not a statusUpdate", id, body)
	}
	p.mu.Lock()
	p.got[ev.StatusUpdate.TaskID] = ev.StatusUpdate.Status.State
	p.mu.Unlock()
	select {
	case p.seen <- struct{}{}:
	default:
	}
	w.WriteHeader(http.StatusNoContent)
}

// TestA2AWithTheOfficialClient drives one gateway (memory store) with
// @a2a-js/sdk's client: see test/testdata/a2a_client.mjs.
func TestA2AWithTheOfficialClient(t *testing.T) {
	t.Parallel()
	runA2AClient(t, nil)
}

// TestA2AOverHTTPJSON is the same over the HTTP+JSON binding (the
// client prefers it from the card).
func TestA2AOverHTTPJSON(t *testing.T) {
	t.Parallel()
	runA2AClient(t, []string{"A2A_TRANSPORT=HTTP+JSON"})
}

// TestA2AAcrossInstances is the same on Redis with two instances: tasks
// started through one are read, canceled and answered through the other.
func TestA2AAcrossInstances(t *testing.T) {
	t.Parallel()
	runA2AClient(t, []string{"REDIS_URL=" + redisURL(t), "A2A_TRANSPORT=JSONRPC"})
}

func runA2AClient(t *testing.T, env []string) {
	sdk := a2aSDK(t)
	push := &pushReceiver{t: t, got: map[string]string{}, seen: make(chan struct{}, 1)}
	hooks := httptest.NewServer(push)
	t.Cleanup(hooks.Close)
	conf := filepath.Join(t.TempDir(), "gateway.yaml")
	yaml := "approvals:\n  actions:\n    document.extract: always\n" +
		"webhooks:\n  allowPrivate: true\n  firstRetry: 200ms\n  poll: 50ms\n"
	if err := os.WriteFile(conf, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	env = append(env, "GATEWAY_CONFIG="+conf)
	model := newFakeLLM(t)
	model.blockNext("slowtag")
	first := startGateway(t, model, env...)
	second := first
	if strings.HasPrefix(env[0], "REDIS_URL=") {
		second = startGateway(t, model, env...)
	}
	cmd := exec.Command("node", filepath.Join("testdata", "a2a_client.mjs"))
	cmd.Env = append(append(os.Environ(), env...), "TWOSTEP_A2A_SDK="+sdk, "A2A_BASE="+first.url, "A2A_BASE2="+second.url,
		"ALICE="+gwAlice, "BOB="+gwBob, "PUSH_URL="+hooks.URL+"/a2a", "PUSH_TOKEN="+a2aPushToken)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the A2A client failed: %v\n%s\ngateway:\n%s", err, out, first.stderr)
	}
	checks := map[string]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var c map[string]any
		if json.Unmarshal([]byte(line), &c) == nil {
			checks[fmt.Sprint(c["check"])] = c
		}
	}
	for _, want := range []string{"card", "send", "get", "isolation", "stream", "resubscribe", "cancel", "approval", "push"} {
		if checks[want] == nil {
			t.Errorf("the client did not report %s:\n%s", want, out)
		}
	}
	task := fmt.Sprint(checks["push"]["task"])
	deadline := time.After(30 * time.Second)
	for {
		push.mu.Lock()
		state := push.got[task]
		push.mu.Unlock()
		if state == "TASK_STATE_COMPLETED" {
			return
		}
		select {
		case <-push.seen:
		case <-deadline:
			t.Fatalf("no push notification of %s completed (got %v)", task, push.got)
		}
	}
}
