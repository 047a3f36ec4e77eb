package test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/twostep/twostep/changefeed"
	"github.com/twostep/twostep/client"
	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/httpapi"
	"github.com/twostep/twostep/llm"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/wiring"
	"github.com/twostep/twostep/workflow"
)

// BenchmarkEventStreamSubscribers holds 500 event-stream subscribers on
// one instance (10 workflows, 50 subscribers each) while every round's
// Stage 2 streams its answer (200 deltas, a millisecond apart, published
// as the engine does), and checks that every subscriber got every
// committed message and the final status. It reports the process's RSS
// before the subscribers, with them idle, and at its peak while the rounds
// stream, with the deltas received and lost. Run it with
//
//	go test ./test -run '^$' -bench EventStreamSubscribers -benchtime 1x
func BenchmarkEventStreamSubscribers(b *testing.B) {
	const workflows, perWorkflow, pieces = 10, 50, 200
	for range b.N {
		r := subscribersRun(b, workflows, perWorkflow, pieces)
		b.ReportMetric(r.rssBase, "rss_base_MB")
		b.ReportMetric(r.rssIdle, "rss_idle_MB")
		b.ReportMetric(r.rssPeak, "rss_peak_MB")
		b.ReportMetric(float64(r.deltas)/float64(workflows*perWorkflow), "deltas/subscriber")
		b.ReportMetric(float64(r.lost), "deltas_lost")
	}
}

type subscribersResult struct {
	rssBase, rssIdle, rssPeak float64
	deltas, lost              int64
}

func subscribersRun(b *testing.B, workflows, perWorkflow, pieces int) subscribersResult {
	start := make(chan struct{})
	var deltas workflow.Deltas
	model := &scripted.Model{Forget: true, Reply: func(n int, req workflow.ModelRequest) (string, error) {
		if req.Stage == workflow.StageOne {
			return enginetest.Completes("x")[0], nil
		}
		<-start
		id, _, _ := strings.Cut(req.CacheKey, ":")
		var text strings.Builder
		for i := range pieces {
			p := fmt.Sprintf("piece %03d ", i)
			text.WriteString(p)
			deltas.PublishDelta(workflow.Delta{WorkflowID: id, Round: 1, Step: 1, Stage: workflow.StageTwo, Field: "message", Text: p})
			time.Sleep(time.Millisecond)
		}
		data, _ := json.Marshal(map[string]any{"schema": "parameters_v1", "parameters": map[string]any{"message": text.String()}})
		return string(data), nil
	}}
	cfg := wiring.Config{MaxSteps: 5, LLMProvider: llm.ProviderScripted, Users: []httpapi.Credential{{UserID: "alice", Token: gwAlice}}}
	cfg.File.Limits.MaxRunningPerUser = workflows
	cfg.File.Limits.Workers = workflows
	g, err := wiring.Wire(context.Background(), cfg, zerolog.Nop(), model)
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	deltas = g.Deltas
	feed := g.Deltas.(*changefeed.DeltaFeed)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	g.Engine.Start(ctx)
	defer g.Engine.Shutdown(context.Background())
	srv := httptest.NewServer(g.API.Routes())
	defer srv.Close()
	res := subscribersResult{rssBase: rssMB()}

	ids := make([]string, workflows)
	for i := range ids {
		wf, err := g.Engine.Create(ctx, engine.NewWorkflow{UserID: "alice", Prompt: "stream " + strconv.Itoa(i)})
		if err != nil {
			b.Fatal(err)
		}
		ids[i] = wf.ID
	}
	c, err := client.New(srv.URL, gwAlice)
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	var received atomic.Int64
	var failures sync.Map
	for _, id := range ids {
		for s := range perWorkflow {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if problem := subscribe(ctx, c, id, &received); problem != "" {
					failures.Store(id+"/"+strconv.Itoa(s), problem)
				}
			}()
		}
	}
	for feed.Subscriptions() < int64(workflows*perWorkflow) {
		select {
		case <-ctx.Done():
			b.Fatalf("only %d of %d subscribers subscribed", feed.Subscriptions(), workflows*perWorkflow)
		case <-time.After(10 * time.Millisecond):
		}
	}
	res.rssIdle = rssMB()
	peak := make(chan float64)
	stopSampling := make(chan struct{})
	go func() {
		m := 0.0
		for {
			m = max(m, rssMB())
			select {
			case <-stopSampling:
				peak <- m
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	close(start)
	wg.Wait()
	close(stopSampling)
	res.rssPeak = <-peak
	res.deltas, res.lost = received.Load(), feed.Lost()
	failures.Range(func(k, v any) bool {
		b.Errorf("subscriber %s: %s", k, v)
		return true
	})
	return res
}

// subscribe follows id's event stream to its end and says what it missed
// ("" when it got every committed message and the final status).
func subscribe(ctx context.Context, c *client.Client, id string, received *atomic.Int64) string {
	var seqs []string
	final := ""
	for ev, err := range c.EventsAfter(ctx, id, 0) {
		if err != nil {
			return err.Error()
		}
		switch ev.Type {
		case "delta":
			received.Add(1)
		case "message":
			seqs = append(seqs, ev.ID)
		case "status":
			var w struct{ Status string }
			_ = json.Unmarshal(ev.Data, &w)
			final = w.Status
		}
	}
	if strings.Join(seqs, ",") != "1,2" || final != "completed" {
		return fmt.Sprintf("messages %v, last status %q", seqs, final)
	}
	return ""
}

// rssMB is this process's resident set size in MB (0 where /proc is
// missing).
func rssMB() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}
