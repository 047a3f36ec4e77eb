package react_test

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/redisstore"
	"github.com/twostep/twostep/workflow"
)

// maxRoundTripsPerStep is issue 20's budget for a React step on Redis:
// select, parameterize, execute+commit — each phase's traces written in
// the pipeline of its commit.
const maxRoundTripsPerStep = 3

// stepMarks is an Observer that notes the store's round-trip count as each
// step is committed (StepFinished runs right after the step's commit, in
// the round's goroutine).
type stepMarks struct {
	rt    *countingHook
	mu    sync.Mutex
	marks []int64
	ended chan struct{}
}

func (s *stepMarks) RoundEnded(*workflow.Workflow) { close(s.ended) }
func (s *stepMarks) StepFinished(workflow.ModeName, string, workflow.MessageStatus, time.Duration) {
	s.mu.Lock()
	s.marks = append(s.marks, s.rt.n.Load())
	s.mu.Unlock()
}
func (s *stepMarks) ModelCalled(workflow.Stage, string, int, int) {}
func (s *stepMarks) ApprovalRequested(string)                     {}
func (s *stepMarks) ApprovalDecided(string, time.Duration)        {}
func (s *stepMarks) Dispatched(string)                            {}

// TestRoundTripsPerStep counts, with a go-redis hook, the Redis round
// trips of each step of a 10-step React round (Stage 1, Stage 2, an action
// with output documents; the last step answers) and fails when any step
// after the first takes more than three: the round's start (claim, state
// and messages read) is counted with the first step and left out.
// Renewals, polls, reclaim and the recovery scan run hourly (the scan's
// first run, at the engine's start, is waited for), so only the steps'
// own work is counted. On miniredis always; on a real Redis and on
// a Redis Cluster too when REDIS_URL and REDIS_CLUSTER_URL are set.
func TestRoundTripsPerStep(t *testing.T) {
	t.Parallel()
	t.Run("miniredis", func(t *testing.T) {
		t.Parallel()
		mr := miniredis.RunT(t)
		roundTripsPerStep(t, redis.NewClient(&redis.Options{Addr: mr.Addr()}))
	})
	t.Run("redis", func(t *testing.T) {
		t.Parallel()
		url := os.Getenv("REDIS_URL")
		if url == "" {
			if os.Getenv("CI") != "" {
				t.Fatal("REDIS_URL is not set; CI must count on a real Redis")
			}
			t.Skip("REDIS_URL is not set")
		}
		o, err := redis.ParseURL(url)
		if err != nil {
			t.Fatal(err)
		}
		roundTripsPerStep(t, redis.NewClient(o))
	})
	t.Run("cluster", func(t *testing.T) {
		t.Parallel()
		url := os.Getenv("REDIS_CLUSTER_URL")
		if url == "" {
			if os.Getenv("CI") != "" {
				t.Fatal("REDIS_CLUSTER_URL is not set; CI must count on a real Redis")
			}
			t.Skip("REDIS_CLUSTER_URL is not set")
		}
		o, err := redis.ParseClusterURL(url)
		if err != nil {
			t.Fatal(err)
		}
		roundTripsPerStep(t, redis.NewClusterClient(o))
	})
}

// roundTripsPerStep runs the round on client, counting its round trips
// (on a cluster, one per pipeline, however many nodes it reaches).
func roundTripsPerStep(t *testing.T, client redis.UniversalClient) {
	t.Cleanup(func() { _ = client.Close() })
	rt := &countingHook{names: true}
	client.AddHook(rt)
	prefix := "twostep-rttest:" + workflow.NewID("")
	t.Cleanup(func() { deleteKeys(client, prefix+":*") })
	store := redisstore.New(client, redisstore.Options{KeyPrefix: prefix})
	cfg := enginetest.Config("rt")
	cfg.LeaseTTL, cfg.PollInterval, cfg.ReclaimInterval, cfg.RecoverInterval = time.Hour, time.Hour, time.Hour, time.Hour
	marks := &stepMarks{rt: rt, ended: make(chan struct{})}
	cfg.Observer = marks
	e := startEngine(t, cfg, store, scripted.New(tenSteps()...), enginetest.NewRegistry())
	// The recovery scan runs once at the engine's start (then hourly):
	// wait for it, so that on a loaded machine it does not fall inside a
	// step, with the dial of the connection it takes.
	for deadline := time.Now().Add(10 * time.Second); !rt.sentAny("smembers"); {
		if time.Now().After(deadline) {
			t.Fatalf("the engine's start-up recovery scan did not run: %q", rt.between(0, rt.n.Load()))
		}
		time.Sleep(2 * time.Millisecond)
	}
	wf, err := e.Create(context.Background(), engine.NewWorkflow{UserID: "alice", Prompt: "run ten steps", MaxSteps: 10})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-marks.ended:
	case <-time.After(time.Minute):
		t.Fatal("the round did not end")
	}
	got := wait(t, e, wf.ID)
	if got.Status != workflow.StatusCompleted || got.Step != 10 {
		t.Fatalf("round ended %s at step %d (%s), want completed at step 10", got.Status, got.Step, got.Error)
	}
	marks.mu.Lock()
	defer marks.mu.Unlock()
	if len(marks.marks) != 10 {
		t.Fatalf("%d steps finished, want 10", len(marks.marks))
	}
	per := make([]int64, 0, 9)
	for i := 1; i < len(marks.marks); i++ {
		n := marks.marks[i] - marks.marks[i-1]
		per = append(per, n)
		limit := int64(maxRoundTripsPerStep)
		if i == len(marks.marks)-1 && store.Cluster() {
			// The round's ending takes the workflow off the running set and
			// then reads its status, in turn: on a cluster the two keys are
			// on different nodes, where one pipeline would send both at once
			// and could read before it removes (a lost wake-up).
			limit++
		}
		if n < 1 || n > limit {
			t.Errorf("step %d took %d Redis round trips, want 1 to %d: %q", i+1, n, limit,
				rt.between(marks.marks[i-1], marks.marks[i]))
		}
	}
	t.Logf("round trips of steps 2-10: %v; the first step with the round's start: %d", per, marks.marks[0])
	traces, err := store.Traces(context.Background(), wf.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := 10*2 + 9; len(traces) != want {
		t.Errorf("%d traces stored, want %d (Stage 1 and 2 of each step, each action)", len(traces), want)
	}
}

// deleteKeys deletes the keys matching pattern, on every master of a
// cluster.
func deleteKeys(client redis.UniversalClient, pattern string) {
	ctx := context.Background()
	scan := func(ctx context.Context, c *redis.Client) error {
		iter := c.Scan(ctx, 0, pattern, 500).Iterator()
		for iter.Next(ctx) {
			c.Del(ctx, iter.Val())
		}
		return iter.Err()
	}
	if cc, ok := client.(*redis.ClusterClient); ok {
		_ = cc.ForEachMaster(ctx, scan)
		return
	}
	if c, ok := client.(*redis.Client); ok {
		_ = scan(ctx, c)
	}
}
