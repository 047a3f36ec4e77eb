package enginetest

import (
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/workflow"
)

// Steps is a engine.Observer that records every step's duration, for
// benchmarks that must report a figure robust to a loaded machine (the
// median) beside wall-clock time.
type Steps struct {
	mu        sync.Mutex
	durations []time.Duration
}

var _ engine.Observer = (*Steps)(nil)

// RoundEnded does nothing.
func (s *Steps) RoundEnded(*workflow.Workflow) {}

// StepFinished records d.
func (s *Steps) StepFinished(_ workflow.ModeName, _ string, _ workflow.MessageStatus, d time.Duration) {
	s.mu.Lock()
	s.durations = append(s.durations, d)
	s.mu.Unlock()
}

// ModelCalled does nothing.
func (s *Steps) ModelCalled(workflow.Stage, string, int, int) {}

// ApprovalRequested does nothing.
func (s *Steps) ApprovalRequested(string) {}

// ApprovalDecided does nothing.
func (s *Steps) ApprovalDecided(string, time.Duration) {}

// Dispatched does nothing.
func (s *Steps) Dispatched(string) {}

// Median returns the median recorded step duration (0 when none).
func (s *Steps) Median() time.Duration {
	s.mu.Lock()
	d := slices.Clone(s.durations)
	s.mu.Unlock()
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return d[len(d)/2]
}

// CPUTime returns the CPU time (user + system) the process has used so
// far; the difference over a benchmark is its cost independent of how busy
// the machine is.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
