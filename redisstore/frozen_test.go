package redisstore_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/redisstore"
	"github.com/twostep/twostep/workflow"
)

// frozenCallBound is how long a call given a frozenCallTimeout context may
// take on a frozen Redis: its deadline plus slack for a loaded machine,
// well under the client's 5 s read timeout that bounded it before.
const (
	frozenCallTimeout = 300 * time.Millisecond
	frozenCallBound   = frozenCallTimeout + time.Second
)

// TestFrozenRedisCallsEndWithTheirContext: with the store's redis-server
// stopped (SIGSTOP: its socket stays open, nothing answers), every call
// ends with its context's deadline, on a node and on a cluster, not with
// the client's read timeout: a ping (/readyz), a commit attempt, a lease
// claim and its renewal, a read. The server is continued afterwards and
// the store works again.
func TestFrozenRedisCallsEndWithTheirContext(t *testing.T) {
	t.Parallel()
	for _, cluster := range []bool{false, true} {
		name := "node"
		if cluster {
			name = "cluster"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			addr, srv := ownRedis(t, cluster)
			ctx := context.Background()
			s, err := redisstore.Open(ctx, "redis://"+addr, redisstore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			if s.Cluster() != cluster {
				t.Fatalf("Open: cluster %v, want %v", s.Cluster(), cluster)
			}
			wf := &workflow.Workflow{ID: workflow.NewID(workflow.PrefixWorkflow), UserID: "alice", Mode: workflow.ModeReact,
				Status: workflow.StatusRunning, Round: 1, Step: 1, MaxSteps: 3}
			stored, _, err := s.Commit(ctx, workflow.Commit{Workflow: wf})
			if err != nil {
				t.Fatal(err)
			}
			if fence, err := s.ClaimRound(ctx, wf.ID, "here", time.Minute); fence == 0 || err != nil {
				t.Fatalf("ClaimRound = %d, %v", fence, err)
			}

			if err := srv.Signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			calls := []struct {
				name string
				call func(context.Context) error
			}{
				{"Ping", s.Ping},
				{"Commit", func(ctx context.Context) error {
					next := stored.Clone()
					next.Step = 2
					_, _, err := s.Commit(ctx, workflow.Commit{Workflow: next, ExpectedVersion: stored.Version, Fence: 1})
					return err
				}},
				{"ClaimRound (renewal)", func(ctx context.Context) error {
					_, err := s.ClaimRound(ctx, wf.ID, "here", time.Minute)
					return err
				}},
				{"GetWorkflow", func(ctx context.Context) error {
					_, err := s.GetWorkflow(ctx, wf.ID)
					return err
				}},
			}
			for _, c := range calls {
				cctx, cancel := context.WithTimeout(ctx, frozenCallTimeout)
				start := time.Now()
				err := c.call(cctx)
				took := time.Since(start)
				cancel()
				if err == nil {
					t.Errorf("%s on a frozen Redis succeeded", c.name)
				}
				if took > frozenCallBound {
					t.Errorf("%s on a frozen Redis took %v with a %v context (bound %v): %v", c.name, took.Round(time.Millisecond), frozenCallTimeout, frozenCallBound, err)
				}
			}

			if err := srv.Signal(syscall.SIGCONT); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(10 * time.Second)
			for {
				got, err := s.GetWorkflow(ctx, wf.ID)
				if err == nil {
					if got.Version != stored.Version && got.Step != 2 {
						t.Errorf("after the stall: version %d step %d; want the commit applied whole or not at all", got.Version, got.Step)
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the store did not recover after the stall: %v", err)
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}

// TestBlockingReceiveThroughOpen: with context deadlines governing the
// client Open makes, XREADGROUP … BLOCK still waits its Block for an
// entry (the reader's context has no deadline), on a node and on a
// cluster, and a context that ends during the block ends it quietly.
func TestBlockingReceiveThroughOpen(t *testing.T) {
	t.Parallel()
	for _, cluster := range []bool{false, true} {
		t.Run(fmt.Sprintf("cluster=%v", cluster), func(t *testing.T) {
			t.Parallel()
			addr, _ := ownRedis(t, cluster)
			ctx := context.Background()
			s, err := redisstore.Open(ctx, "redis://"+addr, redisstore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			d, err := s.Dispatcher(redisstore.DispatchOptions{Partitions: 1, Block: 3 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := d.Receive(ctx, "warm", 0); err != nil { // creates the group; nothing queued
				t.Fatal(err)
			}
			id := workflow.NewID(workflow.PrefixWorkflow)
			go func() {
				time.Sleep(500 * time.Millisecond) // the Receive below is blocked by then
				_ = d.Enqueue(ctx, id)
			}()
			dl, ok, err := d.Receive(ctx, "here", 0)
			if err != nil || !ok || dl.WorkflowID != id {
				t.Fatalf("blocking Receive = %+v, %v, %v; want the entry enqueued during the block", dl, ok, err)
			}
			short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			defer cancel()
			start := time.Now()
			if dl, ok, err := d.Receive(short, "here", 0); err != nil || ok {
				t.Errorf("Receive whose context ended during the block = %+v, %v, %v; want nothing, no error", dl, ok, err)
			}
			if took := time.Since(start); took > frozenCallBound {
				t.Errorf("Receive with a 200ms context blocked %v (its Block is 3 s)", took.Round(time.Millisecond))
			}
		})
	}
}

// ownRedis starts a redis-server of the test's own on a free loopback port
// (with cluster, a one-node Redis Cluster holding every slot), stopped at
// cleanup, and returns its address and process. It skips when redis-server
// is not installed, unless CI is set.
func ownRedis(t *testing.T, cluster bool) (string, *os.Process) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("redis-server is required in CI")
		}
		t.Skip("redis-server is not installed")
	}
	port := freePort(t)
	if cluster {
		for port >= 65535-10000 { // the cluster bus listens on port+10000
			port = freePort(t)
		}
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	args := []string{"--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"}
	if cluster {
		args = append(args, "--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(t.TempDir(), "nodes.conf"))
	}
	srv := exec.Command(bin, args...)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = srv.Process.Signal(syscall.SIGCONT)
		_ = srv.Process.Kill()
		_ = srv.Wait()
	})
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	ctx := context.Background()
	deadline := time.Now().Add(10 * time.Second)
	for c.Ping(ctx).Err() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("redis-server on %s did not start", addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !cluster {
		return addr, srv.Process
	}
	if err := c.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", 0, 16383).Err(); err != nil {
		t.Fatal(err)
	}
	for {
		info, err := c.ClusterInfo(ctx).Result()
		if err == nil && strings.Contains(info, "cluster_state:ok") {
			return addr, srv.Process
		}
		if time.Now().After(deadline) {
			t.Fatalf("the one-node cluster on %s is not ok: %s %v", addr, info, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
