package test

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// readyzBound is how long /readyz may take while the store is frozen:
// DESIGN §9.3 promises an answer within 1 s, plus slack for a loaded
// machine (it took the client's 5 s read timeout before).
const readyzBound = 1500 * time.Millisecond

// TestReadyzWhileRedisIsFrozen (its own redis-server): with the gateway's
// Redis stopped (SIGSTOP: the socket stays open, nothing answers),
// /readyz answers 503 within readyzBound, on a pooled connection and on
// the new one dialled after it; once Redis is continued it answers 200.
func TestReadyzWhileRedisIsFrozen(t *testing.T) {
	addr, srv := startOwnRedis(t)
	g := startGateway(t, newFakeLLM(t), "REDIS_URL=redis://"+addr+"/0")
	t.Cleanup(func() { _ = srv.Signal(syscall.SIGCONT) }) // before the gateway's SIGTERM
	if status, _, _ := g.send(t, "GET", "/readyz", "", nil); status != http.StatusOK {
		t.Fatalf("/readyz before the stall = %d\n%s", status, g.stderr)
	}
	if err := srv.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		start := time.Now()
		status, _, _ := g.send(t, "GET", "/readyz", "", nil)
		took := time.Since(start)
		if status != http.StatusServiceUnavailable {
			t.Errorf("/readyz %d while Redis is frozen = %d, want 503", i+1, status)
		}
		t.Logf("/readyz %d while Redis is frozen: %d in %v", i+1, status, took.Round(time.Millisecond))
		if took > readyzBound {
			t.Errorf("/readyz %d while Redis is frozen took %v, more than %v", i+1, took.Round(time.Millisecond), readyzBound)
		}
	}
	if err := srv.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		status, _, _ := g.send(t, "GET", "/readyz", "", nil)
		if status == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz after the stall = %d\n%s", status, g.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// startOwnRedis runs a redis-server of the test's own on a free loopback
// port, killed at cleanup (continued first, should the test have stopped
// it), and returns its address and process. It skips when redis-server
// is not installed, unless CI is set.
func startOwnRedis(t *testing.T) (string, *os.Process) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("redis-server is required in CI")
		}
		t.Skip("redis-server is not installed")
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
	return addr, srv.Process
}
