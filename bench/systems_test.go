package bench

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twostep/twostep/memstore"
)

// system is one entry of the side-by-side table, set up for one task.
type system struct {
	name string
	task Task
	// perStep is how many model calls the system makes per step.
	perStep int
	open    func(tb testing.TB) System
}

// modelCalls is how many model calls one run makes.
func (s system) modelCalls() int { return s.perStep * s.task.Steps() }

// systems returns every system set up for task, the two on Redis (twostep
// and the round trips' floor, RedisFloor) only when REDIS_URL is set.
func systems(task Task) []system {
	out := []system{
		{"eino", task, 1, func(tb testing.TB) System {
			e, err := NewEino(context.Background(), task)
			if err != nil {
				tb.Fatal(err)
			}
			return e
		}},
		{"langchaingo", task, 1, func(testing.TB) System { return NewLangchaingo(task) }},
		{"twostep-engine", task, 2, func(tb testing.TB) System {
			t, err := NewTwostepEngine(memstore.New(), task)
			if err != nil {
				tb.Fatal(err)
			}
			return t
		}},
		{"twostep-memory", task, 2, func(tb testing.TB) System {
			t, err := NewTwostep(memstore.New(), task)
			if err != nil {
				tb.Fatal(err)
			}
			return t
		}},
	}
	if url := os.Getenv("REDIS_URL"); url != "" {
		out = append(out, system{"twostep-redis", task, 2, func(tb testing.TB) System {
			t, err := NewTwostepRedis(context.Background(), url, task)
			if err != nil {
				tb.Fatal(err)
			}
			return t
		}}, system{"redis-floor", task, 0, func(tb testing.TB) System {
			f, err := NewRedisFloor(context.Background(), url, task)
			if err != nil {
				tb.Fatal(err)
			}
			return f
		}})
	}
	return out
}

// start opens s and closes it when tb ends.
func (s system) start(tb testing.TB) System {
	tb.Helper()
	sys := s.open(tb)
	tb.Cleanup(func() {
		if err := sys.Close(context.Background()); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	return sys
}

// result reads the last run's outcome and checks it.
func (s system) result(ctx context.Context, sys System) (Result, error) {
	res, err := sys.Result(ctx)
	if err == nil {
		err = s.task.Check(res)
	}
	if err == nil && res.ModelCalls != s.modelCalls() {
		err = fmt.Errorf("%d model calls, want %d", res.ModelCalls, s.modelCalls())
	}
	return res, err
}

// runOnce runs the task once and checks its outcome.
func (s system) runOnce(ctx context.Context, sys System) error {
	if err := sys.Run(ctx); err != nil {
		return err
	}
	_, err := s.result(ctx, sys)
	if ferr := sys.Forget(ctx); err == nil {
		err = ferr
	}
	return err
}

// TestEverySystemDoesTheTask runs each system three times in a row (the
// fakes and the engine must reset between runs) and checks the answer, the
// echo inputs in order and the number of model calls, for the table's task
// and for a long one (101 steps: past twostep's default step limit).
func TestEverySystemDoesTheTask(t *testing.T) {
	if os.Getenv("CI") != "" && os.Getenv("REDIS_URL") == "" {
		t.Fatal("REDIS_URL is not set; CI must run twostep on a real Redis too")
	}
	for _, s := range append(systems(Task{Calls: DefaultCalls}), systems(Task{Calls: LongCalls})...) {
		t.Run(fmt.Sprintf("%s/calls=%d", s.name, s.task.Calls), func(t *testing.T) {
			sys := s.start(t)
			for i := range 3 {
				if err := s.runOnce(context.Background(), sys); err != nil {
					t.Fatalf("run %d: %v", i+1, err)
				}
			}
		})
	}
}

// TestCheckCatchesWrongResults: a run that skips a tool call, echoes the
// wrong text or answers something else does not pass.
func TestCheckCatchesWrongResults(t *testing.T) {
	task := Task{Calls: DefaultCalls}
	good := func() Result {
		r := Result{Answer: Answer}
		for i := 1; i <= task.Calls; i++ {
			r.Inputs = append(r.Inputs, ToolInput(i))
		}
		return r
	}
	if err := task.Check(good()); err != nil {
		t.Fatalf("the expected result fails: %v", err)
	}
	tests := []struct {
		name, want string
		change     func(*Result)
	}{
		{"wrong answer", "answer", func(r *Result) { r.Answer = "done" }},
		{"a call missing", "9 tool calls", func(r *Result) { r.Inputs = r.Inputs[1:] }},
		{"calls swapped", "tool call 1 got", func(r *Result) { r.Inputs[0], r.Inputs[1] = r.Inputs[1], r.Inputs[0] }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := good()
			tt.change(&r)
			err := task.Check(r)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Check() = %v, want an error with %q", err, tt.want)
			}
		})
	}
}

// The step clock marks the end of every step of a run, and only during a
// run it was begun for: one mark per tool call and one for the answer, in
// order, none from the warm-up run before it.
func TestStepClockMarksEveryStep(t *testing.T) {
	task := Task{Calls: 25}
	for _, s := range systems(task) {
		if !strings.HasPrefix(s.name, "twostep") {
			continue
		}
		t.Run(s.name, func(t *testing.T) {
			sys := s.start(t)
			ctx := context.Background()
			if err := s.runOnce(ctx, sys); err != nil { // not begun: no marks
				t.Fatal(err)
			}
			clock := sys.(interface{ Steps() *stepClock }).Steps()
			sum := make([]time.Duration, task.Steps())
			clock.begin(cpuTime())
			if err := sys.Run(ctx); err != nil {
				t.Fatal(err)
			}
			if n := clock.end(sum); n != task.Steps() {
				t.Fatalf("%d steps marked, want %d", n, task.Steps())
			}
			if _, err := s.result(ctx, sys); err != nil {
				t.Fatal(err)
			}
			for k, d := range sum {
				if d < 0 {
					t.Errorf("step %d took %v of CPU", k+1, d)
				}
			}
			if err := sys.Forget(ctx); err != nil {
				t.Fatal(err)
			}
			if err := s.runOnce(ctx, sys); err != nil { // ended: no marks
				t.Fatal(err)
			}
			if n := clock.end(sum); n != task.Steps() {
				t.Errorf("%d marks after the clock ended, want the run's %d", n, task.Steps())
			}
		})
	}
}

// The long round's windows are steps 2–11 and its last ten tool calls;
// a task too short for two distinct windows has none.
func TestLongWindows(t *testing.T) {
	early, late, ok := longWindows(Task{Calls: LongCalls})
	if !ok || early != (stepWindow{2, 11}) || late != (stepWindow{91, 100}) {
		t.Errorf("longWindows(%d calls) = %v, %v, %v", LongCalls, early, late, ok)
	}
	if _, _, ok := longWindows(Task{Calls: DefaultCalls}); ok {
		t.Errorf("longWindows(%d calls) has windows", DefaultCalls)
	}
	sum := make([]time.Duration, 101)
	for k := range sum {
		sum[k] = time.Duration(k+1) * time.Microsecond // step k+1 took k+1 µs
	}
	if got := late.mean(sum, 1); got != 95.5 {
		t.Errorf("mean of steps 91–100 = %v µs, want 95.5", got)
	}
	if got := early.mean(sum, 2); got != 3.25 {
		t.Errorf("mean of steps 2–11 over 2 runs = %v µs, want 3.25", got)
	}
}

// The floor makes as many round trips as twostep on Redis makes for the
// table's task, so that the difference of their CPU is twostep's own work
// between its round trips. (The floor's count holds by construction; the
// test guards twostep's, which would drift from the floor's.)
func TestRedisFloorMakesTwostepsRoundTrips(t *testing.T) {
	url := os.Getenv("REDIS_URL")
	if url == "" {
		t.Skip("REDIS_URL is not set")
	}
	ctx := context.Background()
	trips := map[string]int64{}
	for _, s := range systems(Task{Calls: DefaultCalls}) {
		if s.name != "twostep-redis" && s.name != "redis-floor" {
			continue
		}
		sys := s.start(t)
		if err := s.runOnce(ctx, sys); err != nil { // warm-up: scripts, pools
			t.Fatal(err)
		}
		rt := roundTripsOf(sys)
		before := rt.Load()
		if err := sys.Run(ctx); err != nil {
			t.Fatal(err)
		}
		trips[s.name] = rt.Load() - before
		if _, err := s.result(ctx, sys); err != nil {
			t.Fatal(err)
		}
		if err := sys.Forget(ctx); err != nil {
			t.Fatal(err)
		}
	}
	want := int64(floorTripsPerStep*Task{Calls: DefaultCalls}.Steps() + floorTripsPerRound)
	if trips["twostep-redis"] != want || trips["redis-floor"] != want {
		t.Errorf("round trips in a run: twostep-redis %d, redis-floor %d, want both %d", trips["twostep-redis"], trips["redis-floor"], want)
	}
}

// A run's result holds that run's tool calls only, whether or not the run
// before it was read.
func TestResultHoldsTheLastRunOnly(t *testing.T) {
	for _, s := range systems(Task{Calls: 3}) {
		t.Run(s.name, func(t *testing.T) {
			sys := s.start(t)
			ctx := context.Background()
			for range 2 {
				if err := sys.Run(ctx); err != nil {
					t.Fatal(err)
				}
				if err := sys.Forget(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if err := sys.Run(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := s.result(ctx, sys); err != nil {
				t.Error(err)
			}
		})
	}
}
