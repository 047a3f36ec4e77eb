package bench

import (
	"context"
	"os"
	"strconv"
	"sync"
	"testing"
)

// defaultStreams is BenchmarkStepParallel's number of streams unless
// BENCH_STREAMS says otherwise.
const defaultStreams = 4

// parallelStreams returns BENCH_STREAMS, or defaultStreams when it is unset
// or not a positive number.
func parallelStreams() int {
	if n, err := strconv.Atoi(os.Getenv("BENCH_STREAMS")); err == nil && n > 0 {
		return n
	}
	return defaultStreams
}

// BenchmarkStepParallel runs the table's task on each system as a gateway
// under load runs rounds: BENCH_STREAMS (default 4) copies of the system
// side by side in one process, in waves: each wave starts one run on every
// copy at once, each on a goroutine of its own, and ends when the last of
// them does; b.N runs in all. The figures are per step over every run of
// every wave: the process's CPU time, the heap allocations and, on Redis,
// the round trips. With one workflow at a time (BenchmarkStep) the process
// waits idle on every Redis round trip, and the Go scheduler's sleeps and
// wake-ups on the way in and out cost about as much as the round trip
// itself; with several streams one stream's work fills another's wait.
//
// As in BenchmarkStep, reading and checking each run's result and
// forgetting it happen between the waves, outside the window.
func BenchmarkStepParallel(b *testing.B) {
	for _, s := range systems(Task{Calls: DefaultCalls}) {
		b.Run("system="+s.name, func(b *testing.B) { benchParallel(b, s, parallelStreams()) })
	}
}

func benchParallel(b *testing.B, s system, streams int) {
	ctx := context.Background()
	syss := make([]System, streams)
	var trips []*RoundTrips
	for i := range syss {
		syss[i] = s.start(b)
		if err := s.runOnce(ctx, syss[i]); err != nil { // warm-up: caches, scripts, pools
			b.Fatal(err)
		}
		if rt := roundTripsOf(syss[i]); rt != nil {
			trips = append(trips, rt)
		}
	}
	roundTrips := func() (n int64) {
		for _, rt := range trips {
			n += rt.Load()
		}
		return n
	}
	errs := make([]error, streams)
	var tot totals
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		n := min(streams, b.N-done) // the runs of this wave
		w := tot.start(nil)
		rt0 := roundTrips()
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { errs[i] = syss[i].Run(ctx) })
		}
		wg.Wait()
		tot.stop(w, nil)
		tot.rt += roundTrips() - rt0
		b.StopTimer()
		for i := range n {
			if errs[i] != nil {
				b.Fatalf("stream %d: %v", i, errs[i])
			}
			if _, err := s.result(ctx, syss[i]); err != nil {
				b.Fatalf("stream %d: %v", i, err)
			}
			if err := syss[i].Forget(ctx); err != nil {
				b.Fatal(err)
			}
		}
		done += n
		b.StartTimer()
	}
	got := tot.report(b, float64(b.N*s.task.Steps()), trips != nil)
	b.ReportMetric(float64(streams), "streams")
	parallelSummary.add(s.name, b.N, got)
}
