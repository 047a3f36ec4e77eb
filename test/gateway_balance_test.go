package test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/redisstore"
	"github.com/twostep/twostep/workflow"
)

// TestTwoWorkersShareTheRounds (Redis): with one API-only instance taking
// every create and two worker instances of one worker each, two rounds
// whose model calls block run at the same time, one on each worker: an
// idle worker takes work the busy one cannot. They got it through the
// dispatch streams: while the rounds run, each one's entry is pending in
// the consumer group, held by a different worker.
func TestTwoWorkersShareTheRounds(t *testing.T) {
	t.Parallel()
	url := redisURL(t)
	conf := filepath.Join(t.TempDir(), "gateway.yaml")
	if err := os.WriteFile(conf, []byte("limits:\n  workers: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	model := newFakeLLM(t)
	// Prompts of this run only: a round another run left running in the
	// shared Redis (the workers take it over) never blocks in this model.
	run := strings.ToLower(workflow.NewID(""))
	prompt := func(i int) string { return fmt.Sprintf("share%d-%s", i, run) }
	model.blockNext(prompt(0))
	model.blockNext(prompt(1))
	api := startGatewayWith(t, model, []string{"serve", "--workers=0"}, "REDIS_URL="+url)
	w1 := startGatewayWith(t, model, []string{"worker"}, "REDIS_URL="+url, "GATEWAY_CONFIG="+conf)
	w2 := startGatewayWith(t, model, []string{"worker"}, "REDIS_URL="+url, "GATEWAY_CONFIG="+conf)
	ids := make([]string, 2)
	for i := range ids {
		var wf wfView
		api.expect(t, http.StatusCreated, "POST", "/api/v1/workflows", gwAlice,
			map[string]any{"prompt": prompt(i) + " go"}, &wf)
		ids[i] = wf.ID
	}
	model.waitBlocked(t, 2) // one worker each: both are running a round
	holders := pendingHolders(t, url, ids)
	if len(holders) != 2 || holders[ids[0]] == "" || holders[ids[0]] == holders[ids[1]] {
		t.Errorf("dispatch entries pending by workflow: %v; want each round's held by its own worker", holders)
	}
	model.releaseBlocked()
	for _, id := range ids {
		if w := api.waitDone(t, gwAlice, id); w.Status != "completed" {
			t.Errorf("round %s: %+v", id, w)
		}
		api.expect(t, http.StatusNoContent, "DELETE", "/api/v1/workflows/"+id, gwAlice, nil, nil)
	}
	for i, w := range []*gateway{w1, w2} {
		if n := roundsEnded(t, w); n < 1 { // more when it also finished rounds other runs left
			t.Errorf("worker %d ended %d rounds, want at least 1", i+1, n)
		}
		if n := metricValue(t, w, `twostep_dispatch_total{event="received"}`); n < 1 {
			t.Errorf("worker %d's /metrics counts %d dispatch entries received, want at least 1 (reclaimed %d, acked %d, left %d)", i+1, n,
				metricValue(t, w, `twostep_dispatch_total{event="reclaimed"}`), metricValue(t, w, `twostep_dispatch_total{event="acked"}`),
				metricValue(t, w, `twostep_dispatch_total{event="left"}`))
		}
	}
	if n := metricValue(t, api, `twostep_dispatch_total{event="enqueued"}`); n != 2 {
		t.Errorf("the API instance's /metrics counts %d rounds enqueued, want 2", n)
	}
}

// roundsEnded reads twostep_rounds_total{outcome="completed"} from g's
// /metrics.
func roundsEnded(t *testing.T, g *gateway) int {
	t.Helper()
	return metricValue(t, g, `twostep_rounds_total{outcome="completed"}`)
}

// metricValue reads one series (name with labels) from g's /metrics; 0
// when absent.
func metricValue(t *testing.T, g *gateway, series string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, g.url+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+gwMetrics)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, series+" ") {
			var n int
			fmt.Sscan(strings.TrimPrefix(line, series+" "), &n)
			return n
		}
	}
	return 0
}

// pendingHolders returns, for each of ids with an entry pending in the
// dispatch streams' consumer group, the consumer holding it (what
// `redis-cli XPENDING <prefix>:dispatch:{p0} workers - + 10` shows), under
// the test's key prefix.
func pendingHolders(t *testing.T, url string, ids []string) map[string]string {
	t.Helper()
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	client := redis.NewClient(opt)
	defer client.Close()
	ctx := context.Background()
	out := map[string]string{}
	for p := range redisstore.DefaultDispatchPartitions {
		key := redisstore.DispatchKey(testPrefix(t), p)
		pending, err := client.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: key, Group: redisstore.DispatchGroup,
			Start: "-", End: "+", Count: 1000}).Result()
		if err != nil {
			t.Fatalf("XPENDING %s: %v", key, err)
		}
		for _, e := range pending {
			msgs, err := client.XRange(ctx, key, e.ID, e.ID).Result()
			if err != nil || len(msgs) != 1 {
				continue
			}
			if id, _ := msgs[0].Values["wf"].(string); slices.Contains(ids, id) {
				out[id] = e.Consumer
			}
		}
	}
	return out
}
