package test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestFrozenInstanceIsFenced (Redis, its own redis-server): instance A is
// frozen (SIGSTOP) while its Stage 2 call for a POST is in flight, past
// its lease (1s); instance B takes the round over, sends the POST once
// and completes the round. Then A is continued and gets its Stage 2
// answer: it sends no POST (the CRM counts calls per Idempotency-Key) and
// writes nothing (messages and workflow unchanged), because its fencing
// token is stale. The POST carried B's fencing token.
func TestFrozenInstanceIsFenced(t *testing.T) {
	url, _ := startRedisServer(t)
	var (
		mu     sync.Mutex
		byKey  = map[string]int{}
		fences []string
	)
	crm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			mu.Lock()
			byKey[r.Header.Get("Idempotency-Key")]++
			fences = append(fences, r.Header.Get("X-Fencing-Token"))
			mu.Unlock()
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"created": true}`))
	}))
	t.Cleanup(crm.Close)
	model := newScriptLLM(t, 1, true, nil)
	arrived, release := model.holdFirst("fence", "stage2", 1)
	t.Cleanup(release)
	cfg := filepath.Join(t.TempDir(), "gateway.yaml")
	yaml := "approvals:\n  default: never\nlimits:\n  leaseTTL: 1s\nconnections:\n  - user: alice\n    label: crm\n    kind: http\n" +
		"    baseURL: " + crm.URL + "/api\n    description: the CRM\n    headers:\n      Authorization: Bearer ${E2E_FENCE_SECRET}\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"REDIS_URL=" + url, "GATEWAY_CONFIG=" + cfg, "E2E_FENCE_SECRET=fence-secret-0123456789"}
	a := startGatewayWith(t, nil, nil, append(env, "OPENAI_BASE_URL="+model.baseURL("a"), "LOG_LEVEL=debug")...)
	var wf wfView
	a.expect(t, http.StatusCreated, "POST", "/api/v1/workflows", gwAlice, map[string]any{"prompt": "fence go"}, &wf)
	select {
	case <-arrived: // A's Stage 2 call for the POST is in flight
	case <-time.After(15 * time.Second):
		t.Fatalf("A never asked for the POST's parameters (calls %+v):\n%s", model.snapshot(), a.stderr)
	}
	b := startGatewayWith(t, nil, nil, append(env, "OPENAI_BASE_URL="+model.baseURL("b"))...)
	if err := a.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	frozen := true
	t.Cleanup(func() {
		if frozen {
			_ = a.cmd.Process.Signal(syscall.SIGCONT)
		}
	})
	// SIGSTOP takes effect asynchronously: release A's answer only once
	// every thread is stopped, or A may still commit and start the POST.
	waitStopped(t, a.cmd.Process.Pid)
	release() // A's answer waits in its socket
	if done := b.waitDone(t, gwAlice, wf.ID); done.Status != "completed" {
		t.Fatalf("B did not finish the round: %+v\n%s", done, b.stderr)
	}
	var before wfView
	b.expect(t, http.StatusOK, "GET", "/api/v1/workflows/"+wf.ID, gwAlice, nil, &before)
	msgsBefore := b.messages(t, gwAlice, wf.ID)

	if err := a.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	frozen = false
	deadline := time.Now().Add(10 * time.Second)
	// A learns it lost the round in one of three ways: its renewal finds
	// the lease gone, its commit finds the workflow changed, or its status
	// poll finds the round no longer running (whichever of renewal and
	// poll comes first after SIGCONT). Each ends A's run without a write;
	// the checks below hold it to that.
	noticed := func(line string) bool {
		return strings.Contains(line, "round lease lost") || strings.Contains(line, "round changed elsewhere") ||
			strings.Contains(line, "round no longer running in the store")
	}
	for !noticed(a.stderr.String()) {
		if time.Now().After(deadline) {
			t.Fatalf("A never noticed it lost the round:\n%s", a.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, line := range strings.Split(a.stderr.String(), "\n") {
		if noticed(line) {
			t.Logf("A after SIGCONT: %s", line)
			break
		}
	}
	time.Sleep(300 * time.Millisecond) // time for a write that must not happen
	var after wfView
	b.expect(t, http.StatusOK, "GET", "/api/v1/workflows/"+wf.ID, gwAlice, nil, &after)
	if !reflect.DeepEqual(after, before) {
		t.Errorf("the workflow changed after A resumed:\nbefore %+v\nafter  %+v", before, after)
	}
	if msgs := b.messages(t, gwAlice, wf.ID); !reflect.DeepEqual(msgs, msgsBefore) {
		t.Errorf("messages changed after A resumed:\nbefore %+v\nafter  %+v", msgsBefore, msgs)
	}
	mu.Lock()
	defer mu.Unlock()
	key := wf.ID + ":1:1"
	if byKey[key] != 1 || len(fences) != 1 {
		t.Fatalf("POSTs by Idempotency-Key: %v (fences %v); want one, with key %s\nA:\n%s\nB:\n%s", byKey, fences, key, a.stderr, b.stderr)
	}
	if f, err := strconv.Atoi(fences[0]); err != nil || f < 2 {
		t.Errorf("the POST carried X-Fencing-Token %q; want B's token, greater than A's 1", fences[0])
	}
	var aCalls, bCalls int
	for _, c := range model.snapshot() {
		if c.stage == "stage2" && c.n == 1 {
			switch c.proc {
			case "a":
				aCalls++
			case "b":
				bCalls++
			}
		}
	}
	if aCalls != 1 || bCalls != 1 {
		t.Errorf("the POST's Stage 2 was asked %d times by A and %d by B; want once each\nA:\n%s\nB:\n%s", aCalls, bCalls, a.stderr, b.stderr)
	}
}

// waitStopped waits until every thread of process pid is stopped (state T
// in /proc/<pid>/task/*/stat).
func waitStopped(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		stat, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
		stopped := len(stat) > 0
		for _, f := range stat {
			data, err := os.ReadFile(f)
			// The state follows the command name, which is in parentheses.
			i := strings.LastIndexByte(string(data), ')')
			if err != nil || i < 0 || i+2 >= len(data) || data[i+2] != 'T' {
				stopped = false
				break
			}
		}
		if stopped {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d did not stop", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
