package bench

import (
	"context"
	"testing"
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
		b.Run("system="+s.name, func(b *testing.B) {
			sys := s.start(b)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if err := s.runOnce(ctx, sys); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
