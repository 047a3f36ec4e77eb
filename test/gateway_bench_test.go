package test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twostep/twostep/actions"
	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/modes/react"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/templates"
	"github.com/twostep/twostep/workflow"
)

// benchGateway starts the binary with a fake model and a generous running
// limit, so the create benchmark measures the API, not 429s.
func benchGateway(b *testing.B) *gateway {
	cfg := filepath.Join(b.TempDir(), "gateway.yaml")
	if err := os.WriteFile(cfg, []byte("limits:\n  maxRunningPerUser: 1000000\n  workers: 32\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	return startGateway(b, newFakeLLM(b), "GATEWAY_CONFIG="+cfg, "LOG_LEVEL=warn")
}

// reportRate reports requests per second over the timed part.
func reportRate(b *testing.B, start time.Time) {
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
}

// BenchmarkGetWorkflow measures GET /api/v1/workflows/{id} against the real
// binary over loopback, with parallel clients.
func BenchmarkGetWorkflow(b *testing.B) {
	g := benchGateway(b)
	var wf wfView
	g.expect(b, http.StatusCreated, "POST", "/api/v1/workflows", gwAlice, map[string]any{"prompt": "bench1 go"}, &wf)
	g.waitDone(b, gwAlice, wf.ID)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest("GET", g.url+"/api/v1/workflows/"+wf.ID, nil)
			req.Header.Set("Authorization", "Bearer "+gwAlice)
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			var v wfView
			err = json.NewDecoder(resp.Body).Decode(&v)
			resp.Body.Close()
			if err != nil || resp.StatusCode != 200 || v.ID != wf.ID {
				b.Errorf("GET: %d %v", resp.StatusCode, err)
				return
			}
		}
	})
	reportRate(b, start)
}

// BenchmarkCreateWorkflow measures POST /api/v1/workflows with an instant
// model; each created round runs in the background on the gateway.
func BenchmarkCreateWorkflow(b *testing.B) {
	g := benchGateway(b)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	var n atomic.Int64
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			body := fmt.Sprintf(`{"prompt":"bench%d go"}`, n.Add(1))
			req, _ := http.NewRequest("POST", g.url+"/api/v1/workflows", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+gwAlice)
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusCreated {
				b.Errorf("create: %d", resp.StatusCode)
				return
			}
		}
	})
	reportRate(b, start)
}

// BenchmarkIdleWorkflowMemory measures the heap a finished workflow keeps
// in the memory store (state, a user and an assistant message, two traces).
func BenchmarkIdleWorkflowMemory(b *testing.B) {
	model := &scripted.Model{Reply: func(_ int, req workflow.ModelRequest) (string, error) {
		if req.Stage == workflow.StageOne {
			return stage1Reply(2, "idle", ""), nil
		}
		return stage2Reply("op=complete key=idle"), nil
	}}
	reg, err := actions.New(actions.Config{}, model)
	if err != nil {
		b.Fatal(err)
	}
	set, err := templates.Load("")
	if err != nil {
		b.Fatal(err)
	}
	store := memstore.New()
	eng, err := enginetest.NewEngine(engine.Config{MaxRunningPerUser: 1 << 30, Workers: 16}, store, model, reg,
		map[workflow.ModeName]workflow.Mode{workflow.ModeReact: react.New(prompts.NewBuilder(set, prompts.Options{}))})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	eng.Start(ctx)
	defer eng.Shutdown(context.Background())

	const perRound = 200
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	total := 0
	for b.Loop() {
		ids := make([]string, 0, perRound)
		for i := range perRound {
			wf, err := eng.Create(ctx, engine.NewWorkflow{UserID: fmt.Sprintf("u%d", i%50), Prompt: "summarise the quarter for the board"})
			if err != nil {
				b.Fatal(err)
			}
			ids = append(ids, wf.ID)
		}
		for _, id := range ids {
			if wf, err := eng.Wait(ctx, id); err != nil || wf.Status != workflow.StatusCompleted {
				b.Fatalf("wait %s: %v %+v", id, err, wf)
			}
		}
		total += perRound
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(total), "heapB/workflow")
}
