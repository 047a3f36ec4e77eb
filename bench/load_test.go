package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/redact"
	"github.com/twostep/twostep/redisstore"
	"github.com/twostep/twostep/wiring"
	"github.com/twostep/twostep/workflow"
)

// loadUser and loadToken are the one user the load clients act as.
const (
	loadUser   = "load"
	loadToken  = "load-token-0123456789abcdef"
	loadAnswer = "All done."
)

// loadModel finishes every workflow in one step: Stage 1 picks the
// built-in complete action, Stage 2 fills its message. Its replies are
// precomputed, so the benchmark measures the gateway, not the model.
type loadModel struct {
	selectReply, paramsReply string
	calls                    atomic.Int64
}

func newLoadModel() *loadModel {
	c := enginetest.Completes(loadAnswer)
	return &loadModel{selectReply: c[0], paramsReply: c[1]}
}

func (*loadModel) Name() string { return "scripted/load" }

func (m *loadModel) Generate(ctx context.Context, req workflow.ModelRequest) (workflow.ModelResponse, error) {
	if err := ctx.Err(); err != nil {
		return workflow.ModelResponse{}, err
	}
	m.calls.Add(1)
	text := m.paramsReply
	if req.Stage == workflow.StageOne {
		text = m.selectReply
	}
	return workflow.ModelResponse{Text: text, Model: "load", PromptTokens: 100, CompletionTokens: 10}, nil
}

// loadGateway is the real gateway (wiring.LoadConfig and wiring.Wire, as
// `gateway serve` builds it) serving on a 127.0.0.1 listener.
type loadGateway struct {
	url   string
	g     *wiring.Gateway
	srv   *http.Server
	model *loadModel
	stop  context.CancelFunc
	// rt counts the gateway's round trips to Redis (nil on memory).
	rt *RoundTrips
}

// startLoadGateway wires the gateway from the environment the binary would
// read: one user token, the JSON log at info (written to io.Discard, still
// formatted and redacted), the memory store, or Redis when REDIS_URL is
// set. The running limit per user and the worker pool are raised through
// the documented limits section of GATEWAY_CONFIG, since every load
// client acts as the same user.
func startLoadGateway(tb testing.TB, clients int) *loadGateway {
	tb.Helper()
	gin.SetMode(gin.ReleaseMode) // as cmd/gateway's main sets it
	file := filepath.Join(tb.TempDir(), "gateway.yaml")
	yaml := fmt.Sprintf("limits:\n  maxRunningPerUser: %d\n  workers: %d\n", 4*clients, max(8, clients/4))
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		tb.Fatal(err)
	}
	env := map[string]string{
		"GATEWAY_ADDR": "127.0.0.1:0", "GATEWAY_TOKENS": loadUser + ":" + loadToken, "GATEWAY_CONFIG": file,
		"LLM_PROVIDER": "scripted", "LOG_LEVEL": "info", "LOG_FORMAT": "json", "REDIS_URL": os.Getenv("REDIS_URL"),
	}
	cfg, err := wiring.LoadConfig(func(k string) string { return env[k] })
	if err != nil {
		tb.Fatal(err)
	}
	var scrub atomic.Pointer[redact.Redactor]
	scrub.Store(redact.New(cfg.Secrets()...))
	log, err := wiring.NewLogger(io.Discard, cfg.LogFormat, cfg.LogLevel, &scrub)
	if err != nil {
		tb.Fatal(err)
	}
	model := newLoadModel()
	g, err := wiring.Wire(context.Background(), cfg, log, model)
	if err != nil {
		tb.Fatal(err)
	}
	scrub.Store(g.Redactor)
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		tb.Fatal(err)
	}
	srv := g.HTTPServer(g.API.Routes(), log) // as cmd/gateway's serve sets it up
	var rt *RoundTrips
	if rs := workflow.StoreAs[*redisstore.Store](g.Store); rs != nil {
		rt = &RoundTrips{}
		rs.Client().AddHook(rt) // before anything runs: hooks are not added under load
	}
	ctx, cancel := context.WithCancel(log.WithContext(context.Background()))
	g.Engine.Start(ctx)
	go func() { _ = srv.Serve(ln) }()
	lg := &loadGateway{url: "http://" + ln.Addr().String(), g: g, srv: srv, model: model, stop: cancel, rt: rt}
	tb.Cleanup(lg.close)
	return lg
}

func (lg *loadGateway) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = lg.srv.Shutdown(ctx)
	_ = lg.g.Engine.Shutdown(ctx)
	lg.stop()
	_ = lg.g.Close()
}

// loadClient is one HTTP client of the benchmark: keep-alive connections,
// one per concurrent client.
type loadClient struct {
	url  string
	http *http.Client
}

func newLoadClient(url string, conns int) *loadClient {
	return &loadClient{url: url, http: &http.Client{Transport: &http.Transport{
		MaxIdleConns: conns, MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns, IdleConnTimeout: time.Minute,
	}}}
}

// loadResult is what a create with Prefer: wait answers.
type loadResult struct {
	ID       string `json:"id"`
	UserID   string `json:"userId"`
	Status   string `json:"status"`
	Messages []struct {
		Role string `json:"role"`
		Text string `json:"text"`
	} `json:"messages"`
}

// run creates one workflow (POST /api/v1/workflows with Prefer: wait) and
// checks that it finished in its one step with the scripted answer,
// falling back to GET until it does when the wait ran out first.
func (c *loadClient) run(ctx context.Context, prompt []byte) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url+"/api/v1/workflows", bytes.NewReader(prompt))
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+loadToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Prefer", "wait=30")
	var res loadResult
	status, err := c.do(req, &res)
	if err != nil {
		return "", err
	}
	for status == http.StatusCreated && res.Status == string(workflow.StatusRunning) {
		// The wait ran out: poll the workflow (never expected here).
		time.Sleep(5 * time.Millisecond)
		get, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.url+"/api/v1/workflows/"+res.ID, nil)
		get.Header.Set("Authorization", "Bearer "+loadToken)
		if status, err = c.do(get, &res); err != nil {
			return "", err
		}
		if status == http.StatusOK && res.Status != string(workflow.StatusRunning) {
			return "", fmt.Errorf("workflow %s settled %s without its messages (the wait ran out)", res.ID, res.Status)
		}
	}
	if status != http.StatusOK || res.Status != string(workflow.StatusCompleted) || res.UserID != loadUser {
		return "", fmt.Errorf("create answered %d, workflow %s %s of %q", status, res.ID, res.Status, res.UserID)
	}
	if n := len(res.Messages); n != 2 || res.Messages[1].Role != string(workflow.RoleAssistant) || res.Messages[1].Text != loadAnswer {
		return "", fmt.Errorf("workflow %s: messages %+v, want the prompt and the answer %q", res.ID, res.Messages, loadAnswer)
	}
	return res.ID, nil
}

func (c *loadClient) do(req *http.Request, out any) (int, error) {
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode >= 300 {
		return resp.StatusCode, fmt.Errorf("%s %s: %d %s", req.Method, req.URL.Path, resp.StatusCode, data)
	}
	return resp.StatusCode, json.Unmarshal(data, out)
}

func (c *loadClient) delete(ctx context.Context, id string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.url+"/api/v1/workflows/"+id, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+loadToken)
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("DELETE %s: %d", id, resp.StatusCode)
	}
	return nil
}

// loadClients is how many clients create workflows at once.
const loadClients = 64

// BenchmarkLoad drives the gateway over real HTTP: loadClients concurrent
// clients each create a one-step workflow (POST /api/v1/workflows with
// Prefer: wait=30), check the answer and start the next, b.N workflows in
// all. It reports workflows/s, the p50 and p99 latency of a create-and-wait,
// the process's CPU per workflow (client and server: they share the
// process), and the live heap each finished workflow keeps (runtime.GC,
// then HeapAlloc after the b.N workflows minus before, ÷ b.N; the
// workflows are deleted only after it is read). Memory store by default;
// Redis when REDIS_URL is set (system=redis). BENCH_LOAD_CLIENTS sets
// another number of clients; BENCH_LOAD_HEAPPROFILE=file writes the heap
// profile taken with the live heap figure (before the deletes).
func BenchmarkLoad(b *testing.B) {
	system := "memory"
	if os.Getenv("REDIS_URL") != "" {
		system = "redis"
	}
	clients := loadClients
	if n, err := strconv.Atoi(os.Getenv("BENCH_LOAD_CLIENTS")); err == nil && n > 0 {
		clients = n
	}
	b.Run(fmt.Sprintf("system=%s/clients=%d", system, clients), func(b *testing.B) { benchLoad(b, clients) })
}

func benchLoad(b *testing.B, clients int) {
	lg := startLoadGateway(b, clients)
	c := newLoadClient(lg.url, clients)
	ctx := context.Background()
	body := func(i int) []byte {
		return []byte(`{"prompt":"load test workflow ` + strconv.Itoa(i) + `: answer briefly"}`)
	}

	// Warm up: every connection open, every pool and cache filled.
	warm := make([]string, 0, 2*clients)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range 2 * clients {
		wg.Go(func() {
			id, err := c.run(ctx, body(i))
			if err != nil {
				b.Error(err)
				return
			}
			mu.Lock()
			warm = append(warm, id)
			mu.Unlock()
		})
	}
	wg.Wait()
	if b.Failed() {
		return
	}

	n := b.N
	ids := make([]string, n)
	lat := make([]time.Duration, n)
	bodies := make([][]byte, n)
	for i := range bodies {
		bodies[i] = body(i)
	}
	calls0 := lg.model.calls.Load()
	var rt0 int64
	if lg.rt != nil {
		rt0 = lg.rt.Load()
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	cpu0 := cpuTime()
	b.ResetTimer()
	start := time.Now()
	var next atomic.Int64
	for range clients {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				t := time.Now()
				id, err := c.run(ctx, bodies[i])
				lat[i] = time.Since(t)
				if err != nil {
					b.Error(err)
					return
				}
				ids[i] = id
			}
		})
	}
	wg.Wait()
	wall := time.Since(start)
	cpu := cpuTime() - cpu0
	var rts int64
	if lg.rt != nil {
		rts = lg.rt.Load() - rt0
	}
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(bodies)
	if path := os.Getenv("BENCH_LOAD_HEAPPROFILE"); path != "" {
		writeHeapProfile(b, path) // what the finished workflows keep
	}
	if b.Failed() {
		return
	}
	if calls := lg.model.calls.Load() - calls0; calls != int64(2*n) {
		b.Fatalf("%d model calls for %d one-step workflows, want %d", calls, n, 2*n)
	}
	slices.Sort(lat)
	b.ReportMetric(float64(n)/wall.Seconds(), "workflows/s")
	b.ReportMetric(float64(lat[n/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[min(n-1, n*99/100)].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(cpu.Microseconds())/float64(n), "cpu-us/workflow")
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(n), "heapB/workflow")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(n), "allocs/workflow")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(n), "B/workflow")
	if lg.rt != nil {
		// Every round trip of the window: the workflows', and the
		// instance's own (the recovery scan each second, lease renewals
		// of long rounds; a few per second in all).
		b.ReportMetric(float64(rts)/float64(n), "redis-rt/workflow")
	}
	runtime.KeepAlive(ids)

	// Delete what was created (outside the timer), so the heap and Redis
	// do not grow from one run to the next.
	all := append(warm, ids...)
	next.Store(0)
	for range clients {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(all) {
					return
				}
				if err := c.delete(ctx, all[i]); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestLoadGatewayFinishesWorkflows runs the load benchmark's path a few
// times: each create with Prefer: wait answers the completed workflow with
// the prompt and the scripted answer, two model calls each, and a wrong
// token is refused.
func TestLoadGatewayFinishesWorkflows(t *testing.T) {
	lg := startLoadGateway(t, 4)
	c := newLoadClient(lg.url, 4)
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Go(func() {
			id, err := c.run(ctx, []byte(`{"prompt":"test `+strconv.Itoa(i)+`"}`))
			if err != nil {
				t.Error(err)
				return
			}
			if err := c.delete(ctx, id); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := lg.model.calls.Load(); n != 24 {
		t.Errorf("%d model calls for 12 one-step workflows, want 24", n)
	}
	req, _ := http.NewRequest(http.MethodPost, lg.url+"/api/v1/workflows", bytes.NewReader([]byte(`{"prompt":"x"}`)))
	req.Header.Set("Authorization", "Bearer not-"+loadToken)
	req.Header.Set("Content-Type", "application/json")
	if status, err := c.do(req, &loadResult{}); status != http.StatusUnauthorized {
		t.Errorf("a wrong token: %d %v, want 401", status, err)
	}
}

// writeHeapProfile writes the live heap's profile to path (with
// -test.memprofilerate=1 it has every allocation still live).
func writeHeapProfile(tb testing.TB, path string) {
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		tb.Fatal(err)
	}
}
