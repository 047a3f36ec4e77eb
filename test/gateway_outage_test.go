package test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestRedisStallIsRiddenOut (Redis): rounds whose model calls return while
// their own redis-server is stopped (SIGSTOP for 12 s, longer than the 10 s
// a commit attempt may take, so commits time out and are retried) all
// complete once it is continued; none ends failed.
func TestRedisStallIsRiddenOut(t *testing.T) {
	redisURL(t) // skips without Redis, fails under CI without it
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server not installed: %v", err)
	}
	addr := freeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	srv := exec.Command(bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = srv.Process.Signal(syscall.SIGCONT)
		_ = srv.Process.Kill()
		_ = srv.Wait()
	})
	waitRedis(t, addr)
	model := newFakeLLM(t)
	const rounds = 4
	for i := range rounds {
		model.blockNext(fmt.Sprintf("stall%d", i))
	}
	g := startGateway(t, model, "REDIS_URL=redis://"+addr+"/0")
	ids := make([]string, rounds)
	for i := range ids {
		var wf wfView
		g.expect(t, http.StatusCreated, "POST", "/api/v1/workflows", gwBob,
			map[string]any{"prompt": fmt.Sprintf("stall%d go", i)}, &wf)
		ids[i] = wf.ID
	}
	model.waitBlocked(t, rounds)
	if err := srv.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	model.releaseBlocked() // the calls return; their commits meet the stall
	time.Sleep(12 * time.Second)
	if err := srv.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if w := g.waitDone(t, gwBob, id); w.Status != "completed" {
			t.Errorf("round %s after the stall: %+v", id, w)
		}
	}
	if !strings.Contains(g.stderr.String(), "store unavailable; retrying") {
		t.Errorf("no commit met the stall; the test proved nothing:\n%s", g.stderr)
	}
}

// waitRedis waits until the redis-server at addr answers PING.
func waitRedis(t *testing.T, addr string) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	deadline := time.Now().Add(5 * time.Second)
	for c.Ping(context.Background()).Err() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("redis-server on %s did not start", addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
