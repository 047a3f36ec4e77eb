package test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/workflow"
)

// TestClusterFailover (real processes): a Redis Cluster of 3 masters and 3
// replicas of its own, a gateway on it and a slow model; 30 workflows run
// when the master holding their user's slot is killed with SIGKILL. Its
// replica is promoted, and every workflow still ends completed — none
// failed — with gap-free seqs and no step recorded twice. The failover
// time and the answers the API gave meanwhile are printed (figures, not
// assertions). Bounded to 90 s.
func TestClusterFailover(t *testing.T) {
	server, cli := redisBinaries(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	nodes := make([]*clusterNode, 6)
	addrs := make([]string, len(nodes))
	for i := range nodes {
		nodes[i] = startClusterNode(t, server)
		addrs[i] = nodes[i].addr
	}
	create := exec.CommandContext(ctx, cli, append(append([]string{"--cluster", "create"}, addrs...),
		"--cluster-replicas", "1", "--cluster-yes")...)
	if out, err := create.CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	waitClusterReady(t, ctx, addrs)

	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	defer client.Close()
	// Every key of alice's workflows is in the slot of {u:alice}: the
	// victim is the master serving it.
	master, err := client.MasterForKey(ctx, "twostep:{u:alice}:workflows")
	if err != nil {
		t.Fatal(err)
	}
	var victim *clusterNode
	for _, n := range nodes {
		if n.addr == master.Options().Addr {
			victim = n
		}
	}
	if victim == nil {
		t.Fatalf("no started node is %s", master.Options().Addr)
	}

	conf := filepath.Join(t.TempDir(), "gateway.yaml")
	if err := os.WriteFile(conf, []byte("limits:\n  maxRunningPerUser: 40\n  workers: 40\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	model := newFakeLLM(t)
	model.delay = 250 * time.Millisecond
	url := "redis://" + addrs[0] + "?addr=" + strings.Join(addrs[1:], "&addr=")
	g := startGateway(t, model, "REDIS_URL="+url, "GATEWAY_CONFIG="+conf)

	const n = 30
	run := strings.ToLower(workflow.NewID(""))[10:]
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			var wf wfView
			g.expect(t, http.StatusCreated, "POST", "/api/v1/workflows", gwAlice,
				map[string]any{"prompt": fmt.Sprintf("fo%s%02d go", run, i)}, &wf)
			ids[i] = wf.ID
		})
	}
	wg.Wait()
	// Every round is in its first model call: kill the master now.
	model.waitCount(t, n, "made", func() int { return model.calls })
	if err := victim.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	promoted := make(chan time.Duration, 1)
	go func() {
		promoted <- waitPromoted(ctx, addrs, victim.addr)
	}()

	answers := map[int]int{}
	for _, id := range ids {
		w := waitFinished(t, ctx, g, id, answers)
		if w.Status != "completed" {
			t.Errorf("workflow %s ended %s (%s: %s), want completed", id, w.Status, w.StopReason, w.Error)
			continue
		}
		checkMessages(t, g, id)
	}
	took := time.Since(killed)
	t.Logf("failover: replica promoted %v after SIGKILL; all %d workflows completed %v after it; API answers while polling: %v",
		(<-promoted).Round(10*time.Millisecond), n, took.Round(10*time.Millisecond), answers)
	t.Logf("gateway: %d store retries logged, %d rounds left for recovery",
		strings.Count(g.stderr.String(), "store unavailable; retrying"), strings.Count(g.stderr.String(), "left for recovery"))
}

// redisBinaries returns the paths of redis-server and redis-cli; it skips
// when they are missing, but fails when CI is set.
func redisBinaries(t *testing.T) (server, cli string) {
	t.Helper()
	server, err1 := exec.LookPath("redis-server")
	cli, err2 := exec.LookPath("redis-cli")
	if err1 != nil || err2 != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("redis-server and redis-cli are required in CI")
		}
		t.Skip("redis-server or redis-cli is not installed")
	}
	return server, cli
}

// clusterNode is a cluster-enabled redis-server started by the test.
type clusterNode struct {
	addr string
	cmd  *exec.Cmd
}

// startClusterNode starts a cluster-enabled redis-server on a free port
// whose bus port (+10000) is free too, with a 1 s node timeout so a
// failover takes seconds; it is killed at cleanup.
func startClusterNode(t *testing.T, server string) *clusterNode {
	t.Helper()
	port := freeClusterPort(t)
	dir := t.TempDir()
	cmd := exec.Command(server, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(dir, "nodes.conf"),
		"--cluster-node-timeout", "1000", "--cluster-replica-validity-factor", "0",
		"--dir", dir, "--save", "", "--appendonly", "no", "--logfile", filepath.Join(dir, "redis.log"))
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting redis-server: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := "127.0.0.1:" + strconv.Itoa(port)
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	for i := 0; c.Ping(context.Background()).Err() != nil; i++ {
		if i > 200 {
			t.Fatalf("redis-server at %s never answered", addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return &clusterNode{addr: addr, cmd: cmd}
}

// freeClusterPort returns a port p such that p and its cluster bus port
// p+10000 are both free.
func freeClusterPort(t *testing.T) int {
	t.Helper()
	for range 100 {
		p := 20000 + rand.IntN(20000)
		a, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			continue
		}
		b, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+10000))
		a.Close()
		if err != nil {
			continue
		}
		b.Close()
		return p
	}
	t.Fatal("no free port pair for a cluster node")
	return 0
}

// waitClusterReady waits until every node reports cluster_state:ok and
// every replica's link to its master is up (its data is in sync).
func waitClusterReady(t *testing.T, ctx context.Context, addrs []string) {
	t.Helper()
	for _, addr := range addrs {
		c := redis.NewClient(&redis.Options{Addr: addr})
		for {
			state, _ := c.ClusterInfo(ctx).Result()
			repl, _ := c.Info(ctx, "replication").Result()
			if strings.Contains(state, "cluster_state:ok") &&
				(strings.Contains(repl, "role:master") || strings.Contains(repl, "master_link_status:up")) {
				break
			}
			if ctx.Err() != nil {
				c.Close()
				t.Fatalf("cluster node %s never got ready: %s", addr, state)
			}
			time.Sleep(50 * time.Millisecond)
		}
		c.Close()
	}
}

// waitPromoted returns how long it took until a surviving node reports
// cluster_state:ok with the dead node marked failed (its replica
// promoted), or 0 when ctx ends first.
func waitPromoted(ctx context.Context, addrs []string, dead string) time.Duration {
	start := time.Now()
	for _, addr := range addrs {
		if addr == dead {
			continue
		}
		c := redis.NewClient(&redis.Options{Addr: addr})
		defer c.Close()
		for ctx.Err() == nil {
			state, _ := c.ClusterInfo(ctx).Result()
			nodes, _ := c.ClusterNodes(ctx).Result()
			if strings.Contains(state, "cluster_state:ok") && strings.Contains(nodes, dead) && failedIn(nodes, dead) {
				return time.Since(start)
			}
			time.Sleep(20 * time.Millisecond)
		}
		return 0
	}
	return 0
}

// failedIn reports whether CLUSTER NODES output marks addr as failed.
func failedIn(nodes, addr string) bool {
	for line := range strings.SplitSeq(nodes, "\n") {
		f := strings.Fields(line)
		if len(f) > 2 && strings.HasPrefix(f[1], addr+"@") {
			return strings.Contains(f[2], "fail") && !strings.Contains(f[2], "fail?")
		}
	}
	return false
}

// waitFinished polls the workflow until it is no longer running, counting
// the API's answers by status (a store failing over may answer 503).
func waitFinished(t *testing.T, ctx context.Context, g *gateway, id string, answers map[int]int) wfView {
	t.Helper()
	for {
		var w wfView
		status, _, body := g.send(t, "GET", "/api/v1/workflows/"+id, gwAlice, nil)
		answers[status]++
		if status == http.StatusOK {
			if err := jsonUnmarshal(body, &w); err != nil {
				t.Fatal(err)
			}
			if w.Status != "running" {
				return w
			}
		} else if status != http.StatusServiceUnavailable {
			t.Fatalf("GET workflow %s during the failover: %d %s", id, status, body)
		}
		if ctx.Err() != nil {
			t.Fatalf("workflow %s still running at the deadline: %+v\n%s", id, w, g.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkMessages checks a completed workflow's messages: seqs 1..n without
// a gap, no message id twice, no step with two action messages, the user's
// request first and the final answer last.
func checkMessages(t *testing.T, g *gateway, id string) {
	t.Helper()
	msgs := g.messages(t, gwAlice, id)
	seen := map[string]bool{}
	steps := map[string]bool{}
	for i, m := range msgs {
		if m.Seq != int64(i+1) {
			t.Errorf("workflow %s: message %d has seq %d: a gap or a duplicate", id, i, m.Seq)
		}
		if seen[m.ID] {
			t.Errorf("workflow %s: message %s twice", id, m.ID)
		}
		seen[m.ID] = true
		if m.Role == "action" {
			key := fmt.Sprintf("%d/%d", m.Round, m.Step)
			if steps[key] {
				t.Errorf("workflow %s: step %s has two action messages", id, key)
			}
			steps[key] = true
		}
	}
	if len(msgs) < 2 || msgs[0].Role != "user" || msgs[len(msgs)-1].Role != "assistant" ||
		!strings.HasPrefix(msgs[len(msgs)-1].Text, "final answer for fo") {
		t.Errorf("workflow %s: messages %+v, want the request first and the final answer last", id, msgs)
	}
}
