//go:build unix

package prompts

import "syscall"

// processCPU returns the process's user+system CPU time in nanoseconds, so
// benchmarks can report CPU per op on a shared, loaded machine.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
