package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// BenchmarkStep runs the task on every system and reports, per step (a
// tool call or the final answer: Task.Steps per run), the wall time (ns/step),
// the process's CPU time (cpu-us/step, getrusage: every goroutine,
// including the garbage collector's), the heap allocations (allocs/step,
// B/step) and, on Redis, the round trips (redis-rt/step) and, when
// BENCH_REDIS_DEDICATED is set (nothing else uses that Redis), the CPU time
// of redis-server itself (redis-server-cpu-us/step, from INFO cpu; one
// INFO call and Redis's own housekeeping fall inside each run's figure).
// The measured
// window of a run is System.Run; reading and checking its result and
// forgetting it are outside.
//
// Compare the systems with benchstat, medians of at least six runs:
//
//	go test -run '^$' -bench '^BenchmarkStep$' -count 6 | tee new.txt
//	benchstat -col /system new.txt
//
// The summary printed after the benchmarks gives the ratios of each system
// to langchaingo and to Eino, from the medians of this process's runs.
func BenchmarkStep(b *testing.B) {
	for _, s := range systems(Task{Calls: DefaultCalls}) {
		b.Run("system="+s.name, func(b *testing.B) { benchSystem(b, s) })
	}
}

// LongCalls is the number of tool calls of BenchmarkLongRound's task.
const LongCalls = 100

// BenchmarkLongRound is BenchmarkStep on a task of LongCalls tool calls:
// how the cost per step grows with the history a round carries (twostep's
// Stage 1 history, langchaingo's scratchpad, Eino's message list). It is
// not in the summary table.
//
// For twostep it also times each step of every run (stepClock) and reports
// the mean CPU of steps 2–11 (cpu-us/step-early), of steps 91–100
// (cpu-us/step-late) and their ratio within the same runs (late/early):
// issue 20's "step 100 ≤ 1.2 × step 2", without comparing two rounds of
// different lengths. With BENCH_STEP_SERIES set to a directory, each
// twostep system also writes its mean CPU per step, step by step, to
// <dir>/<system>.tsv.
//
// BENCH_GC_PHASE chooses where the collector runs: "" as it falls (in step
// with the runs, since each allocates the same bytes), "random" (see
// shiftGCPhase) or "between": off during the runs and run once before
// each, outside the window, so that the figures hold the steps' own work,
// their allocations included, but no collection.
func BenchmarkLongRound(b *testing.B) {
	for _, s := range systems(Task{Calls: LongCalls}) {
		b.Run("system="+s.name, func(b *testing.B) { benchSystem(b, s) })
	}
}

func benchSystem(b *testing.B, s system) {
	gcPhase := os.Getenv("BENCH_GC_PHASE")
	switch gcPhase {
	case "", "random":
	case "between":
		defer debug.SetGCPercent(debug.SetGCPercent(-1))
	default:
		b.Fatalf("BENCH_GC_PHASE=%q: want random, between or nothing", gcPhase)
	}
	sys := s.start(b)
	ctx := context.Background()
	if err := s.runOnce(ctx, sys); err != nil { // warm-up: caches, scripts, pools
		b.Fatal(err)
	}
	rt := roundTripsOf(sys)
	var server func(context.Context) (time.Duration, error) // redis-server's CPU, on a dedicated Redis
	if r, ok := sys.(*RedisTwostep); ok && os.Getenv("BENCH_REDIS_DEDICATED") != "" {
		server = r.ServerCPU
	}
	var serverCPU time.Duration
	var tot totals
	var clock *stepClock // per-step CPU times, on a long round
	var series []time.Duration
	early, late, long := longWindows(s.task)
	if c, ok := sys.(interface{ Steps() *stepClock }); ok && long {
		clock, series = c.Steps(), make([]time.Duration, s.task.Steps())
	}
	var persisted Result // the last run's, for its commits and traces
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		var s0 time.Duration
		if server != nil || gcPhase != "" {
			b.StopTimer()
			switch gcPhase { // first: the server's CPU window holds the run alone
			case "random":
				shiftGCPhase()
			case "between":
				runtime.GC()
			}
			if server != nil {
				s0 = serverCPU0(ctx, b, server)
			}
			b.StartTimer()
		}
		cycles := gcCycles()
		w := tot.start(rt)
		if clock != nil {
			clock.begin(w.cpu)
		}
		if err := sys.Run(ctx); err != nil {
			b.Fatal(err)
		}
		tot.stop(w, rt)
		b.StopTimer()
		if gcPhase == "between" && gcCycles() != cycles {
			// GOMEMLIMIT, or a runtime.GC() of the system's own.
			b.Fatal("BENCH_GC_PHASE=between: a collection ran inside a run")
		}
		if clock != nil {
			if n := clock.end(series); n != s.task.Steps() {
				b.Fatalf("%d steps marked, want %d", n, s.task.Steps())
			}
		}
		if server != nil {
			serverCPU += serverCPU0(ctx, b, server) - s0
		}
		res, err := s.result(ctx, sys)
		if err != nil {
			b.Fatal(err)
		}
		persisted = res
		if err := sys.Forget(ctx); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	perRun := float64(s.task.Steps())
	steps := float64(b.N) * perRun
	got := tot.report(b, steps, rt != nil)
	if server != nil {
		b.ReportMetric(float64(serverCPU.Nanoseconds())/steps/1e3, "redis-server-cpu-us/step")
	}
	b.ReportMetric(float64(s.perStep), "model-calls/step")
	if persisted.Commits > 0 {
		b.ReportMetric(float64(persisted.Commits)/perRun, "commits/step")
		b.ReportMetric(float64(persisted.Traces)/perRun, "traces/step")
	}
	if clock != nil {
		e, l := early.mean(series, b.N), late.mean(series, b.N)
		b.ReportMetric(e, "cpu-us/step-early")
		b.ReportMetric(l, "cpu-us/step-late")
		b.ReportMetric(l/e, "late/early")
		if dir := os.Getenv("BENCH_STEP_SERIES"); dir != "" {
			if err := writeSeries(filepath.Join(dir, s.name+".tsv"), series, b.N); err != nil {
				b.Error(err)
			}
		}
	}
	if s.task.Calls == DefaultCalls {
		summary.add(s.name, b.N, got)
	}
}

// writeSeries writes the mean CPU of each step over runs runs to path:
// one line per step, "step<TAB>µs".
func writeSeries(path string, sum []time.Duration, runs int) error {
	var sb strings.Builder
	for k, d := range sum {
		fmt.Fprintf(&sb, "%d\t%.1f\n", k+1, float64(d.Nanoseconds())/1e3/float64(runs))
	}
	return os.WriteFile(path, []byte(sb.String()), 0o644)
}

// gcCycles returns the number of collections completed so far.
func gcCycles() uint64 {
	sample := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(sample)
	return sample[0].Value.Uint64()
}

// gcSink keeps shiftGCPhase's garbage from being optimised away.
var gcSink [][]byte

// shiftGCPhase allocates a random amount of garbage (up to the heap's
// growth between two collections), then pauses long enough for a
// collection it started to finish, so that the next collection starts at a
// random point of the run that follows (BENCH_GC_PHASE=random). Without
// it, a task that allocates the same bytes on every run can meet the
// collector at the same steps run after run, and the step clock's windows
// then charge its work to those steps rather than to the steps in
// proportion to what they allocate.
func shiftGCPhase() {
	samples := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}, {Name: "/gc/heap/live:bytes"}}
	metrics.Read(samples)
	room := int64(samples[0].Value.Uint64()) - int64(samples[1].Value.Uint64())
	for n := rand.Int64N(max(room, 1)); n > 0; n -= 64 << 10 {
		gcSink = append(gcSink, make([]byte, 64<<10))
	}
	gcSink = nil
	time.Sleep(20 * time.Millisecond)
}

// serverCPU0 reads redis-server's CPU time or fails b.
func serverCPU0(ctx context.Context, b *testing.B, read func(context.Context) (time.Duration, error)) time.Duration {
	d, err := read(ctx)
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// totals adds up the measured windows of a benchmark.
type totals struct {
	wall, cpu     time.Duration
	allocs, bytes uint64
	rt            int64
}

// window is the state at the start of a measured window.
type window struct {
	wall          time.Time
	cpu           time.Duration
	allocs, bytes uint64
	rt            int64
}

func (t *totals) start(rt *RoundTrips) window {
	// Allocations first: ReadMemStats stops the world, which is not the
	// system's CPU time.
	var w window
	w.allocs, w.bytes = heapAllocs()
	if rt != nil {
		w.rt = rt.Load()
	}
	w.cpu = cpuTime()
	w.wall = time.Now()
	return w
}

func (t *totals) stop(w window, rt *RoundTrips) {
	t.wall += time.Since(w.wall)
	t.cpu += cpuTime() - w.cpu
	allocs, bytes := heapAllocs()
	t.allocs += allocs - w.allocs
	t.bytes += bytes - w.bytes
	if rt != nil {
		t.rt += rt.Load() - w.rt
	}
}

// report reports the totals divided by steps as b's per-step metrics, the
// round trips only when redis, and returns them.
func (t *totals) report(b *testing.B, steps float64, redis bool) perStep {
	got := perStep{
		NS:     float64(t.wall.Nanoseconds()) / steps,
		CPUUS:  float64(t.cpu.Nanoseconds()) / steps / 1e3,
		Allocs: float64(t.allocs) / steps,
		Bytes:  float64(t.bytes) / steps,
		RT:     float64(t.rt) / steps,
	}
	b.ReportMetric(got.NS, "ns/step")
	b.ReportMetric(got.CPUUS, "cpu-us/step")
	b.ReportMetric(got.Allocs, "allocs/step")
	b.ReportMetric(got.Bytes, "B/step")
	if redis {
		b.ReportMetric(got.RT, "redis-rt/step")
	}
	return got
}

// heapAllocs returns the heap allocations made so far: count and bytes.
// It reads runtime.MemStats, as testing's allocs/op does: the runtime/metrics
// counters are exact only once the per-P caches are flushed, and undercount
// a window of a millisecond by half.
func heapAllocs() (objects, bytes uint64) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.Mallocs, ms.TotalAlloc
}

// perStep is one benchmark invocation's figures per step.
type perStep struct{ NS, CPUUS, Allocs, Bytes, RT float64 }

// results collects every invocation's figures, for the ratio table.
type results struct {
	mu  sync.Mutex
	got map[string][]sample
}

type sample struct {
	n int
	perStep
}

var (
	summary         = &results{got: map[string][]sample{}}
	parallelSummary = &results{got: map[string][]sample{}}
)

func (r *results) add(name string, n int, p perStep) {
	r.mu.Lock()
	r.got[name] = append(r.got[name], sample{n, p})
	r.mu.Unlock()
}

// medians returns each system's median figures over its invocations with
// at least a quarter of its largest b.N (the b.N probes are left out).
func (r *results) medians() map[string]perStep {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]perStep{}
	for name, ss := range r.got {
		maxN := 0
		for _, s := range ss {
			maxN = max(maxN, s.n)
		}
		var kept []perStep
		for _, s := range ss {
			if s.n*4 >= maxN {
				kept = append(kept, s.perStep)
			}
		}
		med := func(f func(perStep) float64) float64 {
			v := make([]float64, len(kept))
			for i, p := range kept {
				v[i] = f(p)
			}
			slices.Sort(v)
			if len(v)%2 == 1 {
				return v[len(v)/2]
			}
			return (v[len(v)/2-1] + v[len(v)/2]) / 2
		}
		out[name] = perStep{
			NS: med(func(p perStep) float64 { return p.NS }), CPUUS: med(func(p perStep) float64 { return p.CPUUS }),
			Allocs: med(func(p perStep) float64 { return p.Allocs }), Bytes: med(func(p perStep) float64 { return p.Bytes }),
			RT: med(func(p perStep) float64 { return p.RT }),
		}
	}
	return out
}

// table renders the medians and the CPU and allocation ratios to
// langchaingo and Eino as a Markdown table; with both Redis systems, a last
// row gives twostep-redis's CPU beyond the round trips' floor.
func (r *results) table(first string) string {
	m := r.medians()
	if len(m) == 0 {
		return ""
	}
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	ratio := func(a, b float64) string {
		if b == 0 {
			return "–"
		}
		return fmt.Sprintf("%.2f×", a/b)
	}
	lc, eino := m["langchaingo"], m["eino"]
	var sb strings.Builder
	sb.WriteString("| " + first + " | ns/step | CPU µs/step | allocs/step | B/step | Redis RT/step | CPU ÷ langchaingo | CPU ÷ Eino | allocs ÷ langchaingo | allocs ÷ Eino |\n")
	sb.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, n := range names {
		p := m[n]
		rt := "–"
		if p.RT > 0 {
			rt = fmt.Sprintf("%.2f", p.RT)
		}
		fmt.Fprintf(&sb, "| %s | %.0f | %.1f | %.0f | %.0f | %s | %s | %s | %s | %s |\n", n, p.NS, p.CPUUS, p.Allocs, p.Bytes, rt,
			ratio(p.CPUUS, lc.CPUUS), ratio(p.CPUUS, eino.CPUUS), ratio(p.Allocs, lc.Allocs), ratio(p.Allocs, eino.Allocs))
	}
	// What twostep does on Redis beyond the round trips themselves.
	if r, f := m["twostep-redis"], m["redis-floor"]; r.CPUUS > 0 && f.CPUUS > 0 {
		d := r.CPUUS - f.CPUUS
		fmt.Fprintf(&sb, "| twostep-redis − redis-floor | – | %.1f | – | – | – | %s | %s | – | – |\n", d, ratio(d, lc.CPUUS), ratio(d, eino.CPUUS))
	}
	return sb.String()
}

// TestMain prints the ratio tables after the benchmarks ran (BenchmarkStep's
// and BenchmarkStepParallel's). Their lines start with "|", which benchstat
// ignores.
func TestMain(m *testing.M) {
	code := m.Run()
	if t := summary.table("system"); t != "" {
		fmt.Printf("\n%s", t)
	}
	if t := parallelSummary.table(fmt.Sprintf("system, %d streams", parallelStreams())); t != "" {
		fmt.Printf("\n%s", t)
	}
	os.Exit(code)
}
