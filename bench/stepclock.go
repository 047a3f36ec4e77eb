package bench

import (
	"context"
	"sync"
	"syscall"
	"time"

	"github.com/twostep/twostep/workflow"
)

// stepClock records, during one run, the process's CPU time at the end of
// each step: when the store has applied the commit that carries the step's
// action or assistant message (the last write of a step). The difference
// between two marks is one step's CPU, every goroutine's and the garbage
// collector's included, as cpu-us/step counts it; a compaction call made
// before a step's Stage 1 falls in that step.
//
// It is how the long round tells the cost of a late step from an early one
// within the same run (BenchmarkLongRound's cpu-us/step-early and -late),
// rather than by comparing the averages of two rounds of different
// lengths. Marking costs one getrusage per step.
type stepClock struct {
	mu  sync.Mutex
	on  bool
	cpu []time.Duration // cpu[0]: the run's start; cpu[k]: the end of step k
}

// begin starts recording a run whose measured window started at start (the
// process CPU time then).
func (c *stepClock) begin(start time.Duration) {
	c.mu.Lock()
	c.on = true
	c.cpu = append(c.cpu[:0], start)
	c.mu.Unlock()
}

// mark records the end of a step now.
func (c *stepClock) mark() {
	now := cpuTime()
	c.mu.Lock()
	if c.on {
		c.cpu = append(c.cpu, now)
	}
	c.mu.Unlock()
}

// end stops recording and adds each step's CPU time to sum (sum[k-1] for
// step k); it returns the number of steps marked.
func (c *stepClock) end(sum []time.Duration) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.on = false
	n := len(c.cpu) - 1
	for k := 1; k <= n && k <= len(sum); k++ {
		sum[k-1] += c.cpu[k] - c.cpu[k-1]
	}
	return n
}

// endsStep reports whether a commit of msgs ends a step: it carries the
// step's action message or the round's assistant message.
func endsStep(msgs []workflow.Message) bool {
	for i := range msgs {
		if r := msgs[i].Role; r == workflow.RoleAction || r == workflow.RoleAssistant {
			return true
		}
	}
	return false
}

// Commit applies c, then marks the end of a step when c ends one.
func (r *releases) Commit(ctx context.Context, c workflow.Commit) (*workflow.Workflow, []workflow.Message, error) {
	wf, msgs, err := r.Store.Commit(ctx, c)
	if err == nil && endsStep(c.Messages) {
		r.steps.mark()
	}
	return wf, msgs, err
}

// Steps returns the clock that marks the end of each step of a run.
func (t *Twostep) Steps() *stepClock { return &t.store.steps }

// stepWindow is a range of steps, 1-based and inclusive.
type stepWindow struct{ from, to int }

// longWindows are the two windows of ten tool-call steps that
// BenchmarkLongRound compares within a run of task: steps 2–11 (step 1
// also holds the create commit, the claim and the loads) and the last ten
// tool calls (91–100 for 100 calls), the final answer left out. ok is false
// for a task too short to have two distinct windows.
func longWindows(task Task) (early, late stepWindow, ok bool) {
	if task.Calls < 21 {
		return stepWindow{}, stepWindow{}, false
	}
	return stepWindow{2, 11}, stepWindow{task.Calls - 9, task.Calls}, true
}

// mean is the mean of sum's steps in w, per run, in microseconds.
func (w stepWindow) mean(sum []time.Duration, runs int) float64 {
	var d time.Duration
	for k := w.from; k <= w.to; k++ {
		d += sum[k-1]
	}
	return float64(d.Nanoseconds()) / 1e3 / float64(runs*(w.to-w.from+1))
}

// cpuTime returns the user and system CPU time the process used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
