package test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/workflow"
)

// BenchmarkOneStepWorkflows measures one-step workflows per second through
// three gateway instances sharing one Redis node (a redis-server of its
// own) or the Redis Cluster (REDIS_CLUSTER_URL), with the offline model (each round
// completes in its first step) and 48 clients spread over 12 users and
// the instances. Each op is a create answered with Prefer: wait once the
// round has completed. It also reports the Redis commands the servers
// processed per workflow (INFO commandstats, every master), which
// includes the instances' recovery scans and the waiting requests' reads.
func BenchmarkOneStepWorkflows(b *testing.B) {
	b.Run("node", func(b *testing.B) {
		// A node of its own, so its command count is this benchmark's.
		server, err := exec.LookPath("redis-server")
		if err != nil {
			b.Skip("redis-server is not installed")
		}
		addr := freeAddr(b)
		_, port, _ := strings.Cut(addr, ":")
		cmd := exec.Command(server, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		url := "redis://" + addr
		c := redis.NewClient(&redis.Options{Addr: addr})
		defer c.Close()
		for i := 0; c.Ping(context.Background()).Err() != nil; i++ {
			if i > 200 {
				b.Fatal("redis-server never answered")
			}
			time.Sleep(20 * time.Millisecond)
		}
		benchOneStep(b, url, func(ctx context.Context) int64 { return commandsProcessed(ctx, c) })
	})
	b.Run("cluster", func(b *testing.B) {
		url := os.Getenv("REDIS_CLUSTER_URL")
		if url == "" {
			b.Skip("REDIS_CLUSTER_URL is not set")
		}
		o, err := redis.ParseClusterURL(url)
		if err != nil {
			b.Fatal(err)
		}
		c := redis.NewClusterClient(o)
		defer c.Close()
		benchOneStep(b, url, func(ctx context.Context) int64 {
			var n atomic.Int64
			_ = c.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
				n.Add(commandsProcessed(ctx, node))
				return nil
			})
			return n.Load()
		})
	})
}

func benchOneStep(b *testing.B, url string, commands func(context.Context) int64) {
	const users, clients = 12, 48
	cfg := filepath.Join(b.TempDir(), "gateway.yaml")
	if err := os.WriteFile(cfg, []byte("limits:\n  maxRunningPerUser: 1000\n  workers: 32\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	run := strings.ToLower(workflow.NewID(""))[12:]
	tokens := make([]string, users)
	var pairs []string
	for i := range tokens {
		tokens[i] = fmt.Sprintf("bench-%s-token-%02d", run, i)
		pairs = append(pairs, fmt.Sprintf("bench%s%02d:%s", run, i, tokens[i]))
	}
	env := []string{"REDIS_URL=" + url, "GATEWAY_CONFIG=" + cfg, "LOG_LEVEL=warn", "LLM_PROVIDER=scripted",
		"GATEWAY_TOKENS=" + strings.Join(pairs, ",")}
	gws := []*gateway{startGateway(b, nil, env...), startGateway(b, nil, env...), startGateway(b, nil, env...)}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	ctx := context.Background()
	var next atomic.Int64
	var ids sync.Map // id -> token, deleted at the end
	before := commands(ctx)
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				g, token := gws[c%len(gws)], tokens[c%users]
				req, _ := http.NewRequest("POST", g.url+"/api/v1/workflows",
					strings.NewReader(`{"prompt":"one step `+strconv.FormatInt(i, 10)+`"}`))
				req.Header.Set("Authorization", "Bearer "+token)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Prefer", "wait=30")
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				var wf wfView
				err = jsonDecode(resp, &wf)
				if err != nil || resp.StatusCode != http.StatusOK || wf.Status != "completed" || wf.Step != 1 {
					b.Errorf("create: %d %+v %v", resp.StatusCode, wf, err)
					return
				}
				ids.Store(wf.ID, token)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "workflows/s")
	b.ReportMetric(float64(commands(ctx)-before)/float64(b.N), "redis-cmds/workflow")
	ids.Range(func(id, token any) bool {
		gws[0].send(b, "DELETE", "/api/v1/workflows/"+id.(string), token.(string), nil)
		return true
	})
}

// jsonDecode decodes and closes a response body.
func jsonDecode(resp *http.Response, v any) error {
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	return jsonUnmarshal(data, v)
}

// commandsProcessed sums the calls of INFO commandstats on one node.
func commandsProcessed(ctx context.Context, c *redis.Client) int64 {
	info, err := c.Info(ctx, "commandstats").Result()
	if err != nil {
		return 0
	}
	var total int64
	for line := range strings.SplitSeq(info, "\n") {
		_, rest, ok := strings.Cut(line, ":calls=")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(strings.SplitN(rest, ",", 2)[0], 10, 64)
		total += n
	}
	return total
}
