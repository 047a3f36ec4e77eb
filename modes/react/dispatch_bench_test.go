package react_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/redisstore"
	"github.com/twostep/twostep/workflow"
)

// countingHook counts Redis round trips: one per command sent alone, one
// per pipeline or MULTI.
// With names set, it also keeps each round trip's command names (and
// its error), for a test to show what an unexpected one was.
type countingHook struct {
	n     atomic.Int64
	names bool
	mu    sync.Mutex
	sent  []string // round trip i+1's commands, when names is set
}

func (h *countingHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *countingHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		h.count([]redis.Cmder{cmd}, err)
		return err
	}
}
func (h *countingHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		h.count(cmds, err)
		return err
	}
}

func (h *countingHook) count(cmds []redis.Cmder, err error) {
	if !h.names {
		h.n.Add(1)
		return
	}
	names := make([]string, len(cmds))
	for i, c := range cmds {
		names[i] = c.Name()
	}
	line := strings.Join(names, " ")
	if err != nil {
		line += " (" + err.Error() + ")"
	}
	h.mu.Lock()
	h.sent = append(h.sent, line)
	h.n.Add(1)
	h.mu.Unlock()
}

// sentAny reports whether a round trip so far began with the command
// name (names must be set).
func (h *countingHook) sentAny(name string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, line := range h.sent {
		if strings.HasPrefix(line, name+" ") || line == name {
			return true
		}
	}
	return false
}

// between returns the command names of round trips from+1 to to.
func (h *countingHook) between(from, to int64) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.sent[min(from, int64(len(h.sent))):min(to, int64(len(h.sent)))])
}

// roundEnded signals each ended round.
type roundEnded struct{ ch chan string }

func (o roundEnded) RoundEnded(wf *workflow.Workflow)                                            { o.ch <- wf.ID }
func (roundEnded) StepFinished(workflow.ModeName, string, workflow.MessageStatus, time.Duration) {}
func (roundEnded) ModelCalled(workflow.Stage, string, int, int)                                  {}
func (roundEnded) ApprovalRequested(string)                                                      {}
func (roundEnded) ApprovalDecided(string, time.Duration)                                         {}
func (roundEnded) Dispatched(string)                                                             {}

// BenchmarkDispatchOverhead runs 10-step React rounds (instant scripted
// model) on real Redis, once with the in-process dispatcher and once with
// the Redis Streams one, and reports the Redis round trips of the store
// per step and of the dispatcher per round. The store's figure must be
// the same in both: dispatch costs per round, never per step. Lease
// renewals, status polls, reclaim and the recovery scan are set to hours
// so that only the rounds' own work is counted; a blocked reader's
// XREADGROUP is counted when it is sent. The one-step cases run rounds
// that complete at their first step, BenchmarkLoad's workflows: there
// store-rt/round is what a round costs the store besides its steps (the
// claim, the state and messages read, the release).
func BenchmarkDispatchOverhead(b *testing.B) {
	url := os.Getenv("REDIS_URL")
	if url == "" {
		b.Skip("REDIS_URL is not set")
	}
	for _, tc := range []struct {
		name  string
		redis bool
		steps int
	}{
		{"local-dispatch", false, 10}, {"redis-dispatch", true, 10},
		{"local-dispatch-one-step", false, 1}, {"redis-dispatch-one-step", true, 1},
	} {
		b.Run(tc.name, func(b *testing.B) { benchDispatch(b, url, tc.redis, tc.steps) })
	}
}

func benchDispatch(b *testing.B, url string, useRedis bool, steps int) {
	o, err := redis.ParseURL(url)
	if err != nil {
		b.Fatal(err)
	}
	storeClient, dispatchClient := redis.NewClient(o), redis.NewClient(o)
	b.Cleanup(func() { _ = storeClient.Close(); _ = dispatchClient.Close() })
	storeRT, dispatchRT := &countingHook{}, &countingHook{}
	storeClient.AddHook(storeRT)
	dispatchClient.AddHook(dispatchRT)
	prefix := "twostep-dispatchbench:" + workflow.NewID("")
	b.Cleanup(func() {
		ctx := context.Background()
		iter := storeClient.Scan(ctx, 0, prefix+":*", 500).Iterator()
		for iter.Next(ctx) {
			storeClient.Del(ctx, iter.Val())
		}
	})
	store := redisstore.New(storeClient, redisstore.Options{KeyPrefix: prefix})
	cfg := enginetest.Config("bench")
	cfg.LeaseTTL, cfg.PollInterval, cfg.ReclaimInterval, cfg.RecoverInterval = time.Hour, time.Hour, time.Hour, time.Hour
	ended := roundEnded{ch: make(chan string, 1)}
	cfg.Observer = ended
	if useRedis {
		d, err := redisstore.NewDispatcher(dispatchClient, prefix, redisstore.DispatchOptions{})
		if err != nil {
			b.Fatal(err)
		}
		cfg.Dispatcher = d
	}
	script := tenSteps()
	if steps == 1 {
		script = enginetest.Completes("done at once")
	}
	model := &scripted.Model{Reply: func(n int, _ workflow.ModelRequest) (string, error) {
		return script[n%len(script)], nil
	}}
	e := startEngine(b, cfg, store, model, enginetest.NewRegistry())
	ctx := context.Background()
	time.Sleep(100 * time.Millisecond) // the start-up scan and the readers' first reads
	storeRT.n.Store(0)
	dispatchRT.n.Store(0)
	b.ResetTimer()
	for b.Loop() {
		wf, err := e.Create(ctx, engine.NewWorkflow{UserID: "alice", Prompt: "run the steps", MaxSteps: 10})
		if err != nil {
			b.Fatal(err)
		}
		if id := <-ended.ch; id != wf.ID {
			b.Fatalf("round %s ended, want %s", id, wf.ID)
		}
	}
	b.StopTimer()
	rounds := float64(b.N)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/rounds/float64(steps), "ns/step")
	b.ReportMetric(float64(storeRT.n.Load())/rounds/float64(steps), "store-rt/step")
	if steps == 1 {
		b.ReportMetric(float64(storeRT.n.Load())/rounds, "store-rt/round")
	}
	b.ReportMetric(float64(dispatchRT.n.Load())/rounds, "dispatch-rt/round")
}
