package test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTwoWorkersShareTheRounds (Redis): with one API-only instance taking
// every create and two worker instances of one worker each, two rounds
// whose model calls block run at the same time, one on each worker: an
// idle worker takes work the busy one cannot.
func TestTwoWorkersShareTheRounds(t *testing.T) {
	url := redisURL(t)
	conf := filepath.Join(t.TempDir(), "gateway.yaml")
	if err := os.WriteFile(conf, []byte("limits:\n  workers: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	model := newFakeLLM(t)
	model.blockNext("share0")
	model.blockNext("share1")
	api := startGatewayWith(t, model, []string{"serve", "--workers=0"}, "REDIS_URL="+url)
	w1 := startGatewayWith(t, model, []string{"worker"}, "REDIS_URL="+url, "GATEWAY_CONFIG="+conf)
	w2 := startGatewayWith(t, model, []string{"worker"}, "REDIS_URL="+url, "GATEWAY_CONFIG="+conf)
	ids := make([]string, 2)
	for i := range ids {
		var wf wfView
		api.expect(t, http.StatusCreated, "POST", "/api/v1/workflows", gwAlice,
			map[string]any{"prompt": fmt.Sprintf("share%d go", i)}, &wf)
		ids[i] = wf.ID
	}
	model.waitBlocked(t, 2) // one worker each: both are running a round
	model.releaseBlocked()
	for _, id := range ids {
		if w := api.waitDone(t, gwAlice, id); w.Status != "completed" {
			t.Errorf("round %s: %+v", id, w)
		}
		api.expect(t, http.StatusNoContent, "DELETE", "/api/v1/workflows/"+id, gwAlice, nil, nil)
	}
	for i, w := range []*gateway{w1, w2} {
		if n := roundsEnded(t, w); n != 1 {
			t.Errorf("worker %d ended %d rounds, want 1", i+1, n)
		}
	}
}

// roundsEnded reads twostep_rounds_total{outcome="completed"} from g's
// /metrics.
func roundsEnded(t *testing.T, g *gateway) int {
	t.Helper()
	resp, err := http.Get(g.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, `twostep_rounds_total{outcome="completed"} `) {
			var n int
			fmt.Sscan(strings.TrimPrefix(line, `twostep_rounds_total{outcome="completed"} `), &n)
			return n
		}
	}
	return 0
}
