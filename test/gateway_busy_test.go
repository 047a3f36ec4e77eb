package test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestIdempotentCreateAcrossInstances (Redis): one create sent to two
// instances at once with one Idempotency-Key makes one workflow and two
// identical answers; the key with another body is refused; after a
// restart the kept answer is still replayed.
func TestIdempotentCreateAcrossInstances(t *testing.T) {
	t.Parallel()
	testIdempotentCreateAcrossInstances(t, redisURL(t))
}

// TestIdempotentCreateAcrossInstancesOnCluster is the same on the Redis
// Cluster at REDIS_CLUSTER_URL: each key is one key in its user's slot.
func TestIdempotentCreateAcrossInstancesOnCluster(t *testing.T) {
	t.Parallel()
	testIdempotentCreateAcrossInstances(t, clusterURL(t))
}

func testIdempotentCreateAcrossInstances(t *testing.T, url string) {
	model := newFakeLLM(t)
	a := launch(t, model, "REDIS_URL="+url) // stopped by the test itself
	t.Cleanup(func() { _ = a.cmd.Process.Kill() })
	waitHealthy(t, a)
	b := startGateway(t, model, "REDIS_URL="+url)
	body := map[string]any{"prompt": "idem1 go"}
	type answer struct {
		status   int
		replayed string
		body     []byte
	}
	answers := make([]answer, 2)
	var wg sync.WaitGroup
	for i, g := range []*gateway{a, b} {
		wg.Go(func() {
			status, hdr, data := g.send(t, "POST", "/api/v1/workflows", gwAlice, body, "Idempotency-Key", "create-idem1")
			answers[i] = answer{status, hdr.Get("Idempotent-Replayed"), data}
		})
	}
	wg.Wait()
	if answers[0].status != http.StatusCreated || answers[1].status != http.StatusCreated || !bytes.Equal(answers[0].body, answers[1].body) {
		t.Fatalf("answers: %d %s / %d %s; want two identical 201s", answers[0].status, answers[0].body, answers[1].status, answers[1].body)
	}
	if answers[0].replayed+answers[1].replayed != "true" {
		t.Errorf("Idempotent-Replayed headers %q and %q, want exactly one true", answers[0].replayed, answers[1].replayed)
	}
	var list struct {
		Workflows []wfView `json:"workflows"`
	}
	a.expect(t, http.StatusOK, "GET", "/api/v1/workflows", gwAlice, nil, &list)
	n := 0
	for _, w := range list.Workflows {
		if w.Title == "idem1 go" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d workflows were created, want 1", n)
	}
	if status, _, data := b.send(t, "POST", "/api/v1/workflows", gwAlice, map[string]any{"prompt": "idem1 other"}, "Idempotency-Key", "create-idem1"); status != http.StatusUnprocessableEntity {
		t.Errorf("the key with another body: %d %s, want 422", status, data)
	}
	if err := a.stop(); err != nil {
		t.Fatal(err)
	}
	c := startGateway(t, model, "REDIS_URL="+url)
	status, hdr, data := c.send(t, "POST", "/api/v1/workflows", gwAlice, body, "Idempotency-Key", "create-idem1")
	if status != http.StatusCreated || hdr.Get("Idempotent-Replayed") != "true" || !bytes.Equal(data, answers[0].body) {
		t.Errorf("after a restart: %d replayed %q %s; want the kept answer", status, hdr.Get("Idempotent-Replayed"), data)
	}
}

// TestEnqueuedRoundsSurviveAKill (Redis): three rounds enqueued during a
// round whose model call hangs run in order, none lost, after the
// instance running them is killed with SIGKILL.
func TestEnqueuedRoundsSurviveAKill(t *testing.T) {
	t.Parallel()
	testEnqueuedRoundsSurviveAKill(t, redisURL(t))
}

// TestEnqueuedRoundsSurviveAKillOnCluster is the same on the Redis Cluster
// at REDIS_CLUSTER_URL.
func TestEnqueuedRoundsSurviveAKillOnCluster(t *testing.T) {
	t.Parallel()
	testEnqueuedRoundsSurviveAKill(t, clusterURL(t))
}

func testEnqueuedRoundsSurviveAKill(t *testing.T, url string) {
	conf := filepath.Join(t.TempDir(), "gateway.yaml")
	if err := os.WriteFile(conf, []byte("limits:\n  leaseTTL: 1s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	model := newFakeLLM(t)
	model.blockNext("busy1")
	victim := launch(t, model, "REDIS_URL="+url, "GATEWAY_CONFIG="+conf)
	waitHealthy(t, victim)
	var wf wfView
	victim.expect(t, http.StatusCreated, "POST", "/api/v1/workflows", gwAlice, map[string]any{"prompt": "busy1 go"}, &wf)
	model.waitBlocked(t, 1)
	rounds := "/api/v1/workflows/" + wf.ID + "/rounds"
	if status, _, _ := victim.send(t, "POST", rounds, gwAlice, map[string]any{"prompt": "rejected"}); status != http.StatusConflict {
		t.Errorf("a round while one runs, no onBusy: %d, want 409", status)
	}
	for i, p := range []string{"qa1 go", "qb2 go", "qc3 go"} {
		var got struct {
			QueuedRounds []struct {
				Round int    `json:"round"`
				Title string `json:"title"`
			} `json:"queuedRounds"`
		}
		victim.expect(t, http.StatusAccepted, "POST", rounds+"?onBusy=enqueue", gwAlice, map[string]any{"prompt": p}, &got)
		if len(got.QueuedRounds) != i+1 || got.QueuedRounds[i].Title != p || got.QueuedRounds[i].Round != i+2 {
			t.Fatalf("after enqueueing %q: queuedRounds %+v", p, got.QueuedRounds)
		}
	}
	survivor := startGateway(t, model, "REDIS_URL="+url, "GATEWAY_CONFIG="+conf)
	if err := victim.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-victim.done
	done := survivor.waitDone(t, gwAlice, wf.ID)
	if done.Status != "completed" || done.Round != 4 {
		t.Fatalf("after the kill: status %s round %d, want round 4 completed", done.Status, done.Round)
	}
	var got []string
	for i, m := range survivor.messages(t, gwAlice, wf.ID) {
		if m.Seq != int64(i+1) {
			t.Errorf("message %d has seq %d: a gap or a duplicate", i, m.Seq)
		}
		if m.Role == "user" || m.Role == "assistant" {
			got = append(got, fmt.Sprintf("%d:%s:%s", m.Round, m.Role, m.Text))
		}
	}
	want := []string{"1:user:busy1 go", "1:assistant:final answer for busy1",
		"2:user:qa1 go", "2:assistant:final answer for qa1", "3:user:qb2 go", "3:assistant:final answer for qb2",
		"4:user:qc3 go", "4:assistant:final answer for qc3"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rounds:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestInterruptDuringStageOne (Redis): an interrupting round sent while
// Stage 1 hangs cancels that call, ends the round with no half step and
// runs.
func TestInterruptDuringStageOne(t *testing.T) {
	t.Parallel()
	url := redisURL(t)
	model := newFakeLLM(t)
	testInterruptDuringStageOne(t, model, startGateway(t, model, "REDIS_URL="+url))
}

// TestInterruptFromAnAPIInstance (Redis): the interrupting round reaches
// the API-only instance, while the round runs on a worker instance, whose
// status poll notices it.
func TestInterruptFromAnAPIInstance(t *testing.T) {
	t.Parallel()
	url := redisURL(t)
	model := newFakeLLM(t)
	api := startGatewayWith(t, model, []string{"serve", "--workers=0"}, "REDIS_URL="+url)
	startGatewayWith(t, model, []string{"worker"}, "REDIS_URL="+url)
	testInterruptDuringStageOne(t, model, api)
}

func testInterruptDuringStageOne(t *testing.T, model *fakeLLM, g *gateway) {
	model.blockNext("intr1")
	var wf wfView
	g.expect(t, http.StatusCreated, "POST", "/api/v1/workflows", gwAlice, map[string]any{"prompt": "intr1 go"}, &wf)
	model.waitBlocked(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	queued, err := g.client(t, gwAlice).QueueRound(ctx, wf.ID, "intr2 go", "interrupt")
	if err != nil {
		t.Fatal(err)
	}
	if q := queued.QueuedRounds; len(q) != 1 || !q[0].Interrupt || q[0].Round != 2 || q[0].Title != "intr2 go" {
		t.Errorf("the client's queued rounds: %+v", q)
	}
	done := g.waitDone(t, gwAlice, wf.ID)
	if done.Status != "completed" || done.Round != 2 {
		t.Fatalf("status %s round %d, want round 2 completed", done.Status, done.Round)
	}
	var got []string
	for _, m := range g.messages(t, gwAlice, wf.ID) {
		text := m.Text
		if m.Round == 1 && m.Role == "assistant" && strings.Contains(text, "interrupted") {
			text = "interrupted"
		}
		got = append(got, fmt.Sprintf("%d:%s:%s", m.Round, m.Role, text))
	}
	want := []string{"1:user:intr1 go", "1:assistant:interrupted", "2:user:intr2 go"}
	if len(got) < 4 || strings.Join(got[:3], "\n") != strings.Join(want, "\n") || got[len(got)-1] != "2:assistant:final answer for intr2" {
		t.Errorf("messages:\n%s\nwant round 1 interrupted with no step, then round 2 answered", strings.Join(got, "\n"))
	}
	model.mu.Lock()
	cancelled := model.cancelled
	model.mu.Unlock()
	if cancelled != 1 {
		t.Errorf("%d model calls were cancelled, want the hanging Stage 1 call", cancelled)
	}
}
