package test

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestKilledInstancesRoundIsTakenOver (Redis): an instance killed with
// SIGKILL mid model call leaves its round running; the other instance
// reclaims its dispatch entry once the lease (limits.leaseTTL: 1s) expired and finishes
// it with no duplicated message. The takeover time is printed (a figure,
// not an assertion: timing belongs in benchmarks).
func TestKilledInstancesRoundIsTakenOver(t *testing.T) {
	testKilledInstancesRoundIsTakenOver(t, redisURL(t))
}

// TestKilledInstancesRoundIsTakenOverOnCluster is the same takeover with
// the store on the Redis Cluster at REDIS_CLUSTER_URL: the lease and the
// recovery scan work across shards.
func TestKilledInstancesRoundIsTakenOverOnCluster(t *testing.T) {
	testKilledInstancesRoundIsTakenOver(t, clusterURL(t))
}

func testKilledInstancesRoundIsTakenOver(t *testing.T, url string) {
	conf := filepath.Join(t.TempDir(), "gateway.yaml")
	if err := os.WriteFile(conf, []byte("limits:\n  leaseTTL: 1s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	model := newFakeLLM(t)
	model.blockNext("killed1")
	victim := launch(t, model, "REDIS_URL="+url, "GATEWAY_CONFIG="+conf)
	waitHealthy(t, victim)
	var wf wfView
	victim.expect(t, http.StatusCreated, "POST", "/api/v1/workflows", gwAlice, map[string]any{"prompt": "killed1 go"}, &wf)
	model.waitBlocked(t, 1)
	survivor := startGateway(t, model, "REDIS_URL="+url, "GATEWAY_CONFIG="+conf)
	if err := victim.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-victim.done
	killed := time.Now()
	done := survivor.waitDone(t, gwAlice, wf.ID)
	t.Logf("takeover: round finished by the survivor %v after SIGKILL (leaseTTL 1s, reclaim every 1s)",
		time.Since(killed).Round(10*time.Millisecond))
	if done.Status != "completed" {
		t.Fatalf("after the kill: %+v", done)
	}
	msgs := survivor.messages(t, gwAlice, wf.ID)
	if n := len(msgs); n != 3 || msgs[2].Text != "final answer for killed1" {
		t.Errorf("messages after the takeover: %+v", msgs)
	}
	for i, m := range msgs {
		if m.Seq != int64(i+1) {
			t.Errorf("message %d has seq %d: a gap or a duplicate", i, m.Seq)
		}
	}
	survivor.expect(t, http.StatusNoContent, "DELETE", "/api/v1/workflows/"+wf.ID, gwAlice, nil, nil)
}
