package redisstore_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/redisstore"
	"github.com/twostep/twostep/workflow"
)

// TestOpenRefusesAClusterNode starts a redis-server in cluster mode on a
// free local port: Open must refuse it at start-up with a clear error,
// rather than answer every commit with a cross-slot failure later.
func TestOpenRefusesAClusterNode(t *testing.T) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("redis-server is not installed; CI must run this test")
		}
		t.Skip("redis-server is not installed")
	}
	port := freePort(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--cluster-enabled", "yes", "--cluster-config-file", dir+"/nodes.conf",
		"--dir", dir, "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting redis-server: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	url := "redis://127.0.0.1:" + strconv.Itoa(port)
	waitForRedis(t, ctx, url)

	s, err := redisstore.Open(ctx, url, redisstore.Options{})
	if err == nil {
		_ = s.Close()
		t.Fatal("Open accepted a Redis Cluster node")
	}
	if workflow.KindOf(err) != workflow.KindInvalid || !strings.Contains(err.Error(), "Redis Cluster node") {
		t.Errorf("Open(cluster node) = %v (kind %q), want a KindInvalid error naming the cluster", err, workflow.KindOf(err))
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// waitForRedis waits until the server at url answers PING, or fails t.
func waitForRedis(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	o, _ := redis.ParseURL(url)
	c := redis.NewClient(o)
	defer c.Close()
	for c.Ping(ctx).Err() != nil {
		select {
		case <-ctx.Done():
			t.Fatalf("redis-server at %s never answered", url)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
