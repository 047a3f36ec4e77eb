package test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/workflow"
)

// TestRunningLimitAcrossInstances sends 200 concurrent creates of one user,
// split over two gateway processes sharing one Redis, while every accepted
// round hangs in its first model call: exactly maxRunningPerUser (default
// 4) are accepted, every other one is a 429, none is anything else.
func TestRunningLimitAcrossInstances(t *testing.T) {
	t.Parallel()
	testRunningLimitAcrossInstances(t, redisURL(t))
}

// TestRunningLimitAcrossInstancesOnCluster is the same race with the store
// on the Redis Cluster at REDIS_CLUSTER_URL.
func TestRunningLimitAcrossInstancesOnCluster(t *testing.T) {
	t.Parallel()
	testRunningLimitAcrossInstances(t, clusterURL(t))
}

func testRunningLimitAcrossInstances(t *testing.T, url string) {
	model := newFakeLLM(t)
	const n = 200
	// A user and prompts of this run only: no other test's rounds count
	// against the user, and rounds other runs left running in the shared
	// Redis (which these gateways take over) never block in this model.
	run := workflow.NewID("r")
	prompt := func(i int) string { return fmt.Sprintf("limitrace-%s-%03d", run, i) }
	for i := range n {
		model.blockNext(prompt(i))
	}
	user := "limit-" + run
	token := "e2e-limit-token-" + workflow.NewID("t")
	env := []string{"REDIS_URL=" + url, "GATEWAY_TOKENS=" + user + ":" + token}
	gws := []*gateway{startGateway(t, model, env...), startGateway(t, model, env...)}

	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		counts = map[int]int{}
		ids    []string
	)
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			status, _, body := gws[i%2].send(t, "POST", "/api/v1/workflows", token,
				map[string]any{"prompt": prompt(i) + " go"})
			var wf wfView
			_ = jsonUnmarshal(body, &wf)
			mu.Lock()
			defer mu.Unlock()
			counts[status]++
			if status == http.StatusCreated {
				ids = append(ids, wf.ID)
			}
		})
	}
	close(start)
	wg.Wait()
	// Connections the client dialed but never used would hold the
	// gateways' HTTP shutdown for 5 s (net/http treats new connections as
	// active that long).
	http.DefaultClient.CloseIdleConnections()
	t.Cleanup(func() { // leave nothing running in the shared Redis
		for _, id := range ids {
			gws[0].send(t, "DELETE", "/api/v1/workflows/"+id, token, nil)
		}
	})
	if counts[http.StatusCreated] != engine.DefaultMaxRunningPerUser || counts[http.StatusTooManyRequests] != n-engine.DefaultMaxRunningPerUser {
		t.Fatalf("answers to %d concurrent creates over 2 instances: %v; want %d × 201, the rest 429",
			n, counts, engine.DefaultMaxRunningPerUser)
	}
	// The accepted rounds are still running (blocked in the model), so
	// the limit held while they ran, not because they had ended.
	model.waitBlocked(t, engine.DefaultMaxRunningPerUser)
	model.mu.Lock()
	blocked := model.blocked
	model.mu.Unlock()
	if blocked != engine.DefaultMaxRunningPerUser {
		t.Errorf("%d rounds reached the model, want %d", blocked, engine.DefaultMaxRunningPerUser)
	}
}
