package bench

import (
	"context"
	"fmt"
	"runtime/pprof"
	"testing"

	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/workflow"
)

// BenchmarkProfile runs the task on every system with nothing around the
// runs but the check of each result and the forgetting of its workflow: no
// timer stops and no runtime.ReadMemStats, whose stop-the-world pauses
// would fill a CPU profile with scheduler work. It is for profiles only
// (its ns/op includes the check); README.md shows how to leave the check
// out of the profile:
//
//	go test -run '^$' -bench 'Profile/system=twostep-memory$' -benchtime 3000x -cpuprofile cpu.out
//	go tool pprof -top -ignore '\(\*Twostep\)\.(Result|Forget)' cpu.out
func BenchmarkProfile(b *testing.B) {
	for _, s := range systems(Task{Calls: DefaultCalls}) {
		b.Run("system="+s.name, func(b *testing.B) { profileSystem(b, s) })
	}
}

// BenchmarkProfileLongRound is BenchmarkProfile on the long round's task
// for twostep on the memory store and the engine alone, with each step's
// phases labelled by the step's decade ("steps=001-010", ...,
// "steps=091-100", "steps=101-110"), so a profile can be cut to the late
// steps or the early ones:
//
//	go test -run '^$' -bench 'ProfileLongRound/system=twostep-memory$' -benchtime 300x -cpuprofile cpu.out
//	go tool pprof -top -tagfocus 'steps=091-100' cpu.out
//
// The labels are on the goroutine running the mode's Step (renders, model
// calls, parsing, commits); the garbage collector's background workers and
// the engine's other goroutines carry none.
func BenchmarkProfileLongRound(b *testing.B) {
	task := Task{Calls: LongCalls}
	for _, s := range []system{
		{"twostep-engine", task, 2, func(tb testing.TB) System {
			t, err := NewTwostepEngine(memstore.New(), task, labelSteps)
			if err != nil {
				tb.Fatal(err)
			}
			return t
		}},
		{"twostep-memory", task, 2, func(tb testing.TB) System {
			t, err := NewTwostep(memstore.New(), task, labelSteps)
			if err != nil {
				tb.Fatal(err)
			}
			return t
		}},
	} {
		b.Run("system="+s.name, func(b *testing.B) { profileSystem(b, s) })
	}
}

func profileSystem(b *testing.B, s system) {
	sys := s.start(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := s.runOnce(ctx, sys); err != nil {
			b.Fatal(err)
		}
	}
}

// labelSteps wraps the system's mode so that each Step runs under the
// profiler label steps=<the step's decade>.
func labelSteps(t *Twostep) {
	t.wrap = func(m workflow.Mode) workflow.Mode { return stepLabels{m} }
}

type stepLabels struct{ workflow.Mode }

func (m stepLabels) Step(ctx context.Context, run workflow.Run) (err error) {
	d := (run.Workflow().Step - 1) / 10
	pprof.Do(ctx, pprof.Labels("steps", fmt.Sprintf("%03d-%03d", 10*d+1, 10*d+10)), func(ctx context.Context) {
		err = m.Mode.Step(ctx, run)
	})
	return err
}
