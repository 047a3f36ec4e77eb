// Package bench measures the per-step cost of twostep beside two other Go
// agent loops — langchaingo's agents executor and Eino's ReAct agent — on
// one task: ten tool calls chosen by an instant in-process fake model, then
// a final answer. Every system's answer and tool calls are checked on every
// run, so a system that skips work fails instead of looking fast. It also
// holds the cost comparison of issue 34 (cost*.go): fixed workloads through
// the twostep engine against the plain tool-calling loop, in tokens, cached
// tokens, dollars and modelled latency.
//
// It is its own module (see go.mod) so that the main module does not depend
// on langchaingo's agents or on Eino; a replace directive makes it measure
// the working tree. README.md says how to run it and what each system does
// per step.
package bench

import (
	"context"
	"fmt"
	"strings"
	"sync"
)

// Task is what every system runs: Calls calls of an echo tool with
// ToolInput(1..Calls), then the final answer Answer.
type Task struct{ Calls int }

// DefaultCalls is the number of tool calls of the side-by-side table.
const DefaultCalls = 10

// Prompt is the user's request; Answer is the final answer of every task.
const (
	Prompt = "Echo the results, then say you are done."
	Answer = "all steps done"
)

// Steps is what a run counts per-step figures by: one per tool call and one
// for the final answer (a ReAct iteration in every system).
func (t Task) Steps() int { return t.Calls + 1 }

// ToolInput is the text the model asks the echo tool to return at call i
// (1-based). Each is distinct, so twostep's loop detection stays quiet.
func ToolInput(i int) string {
	return fmt.Sprintf("result of step %d with some text to summarise", i)
}

// Result is what one run of the task produced.
type Result struct {
	// Answer is the final answer the system returned.
	Answer string
	// Inputs are the echo tool's inputs, in call order.
	Inputs []string
	// ModelCalls counts the model calls the run made.
	ModelCalls int
	// Commits and Traces count what the run persisted (twostep only): the
	// workflow's version, which every commit increments, and its traces.
	Commits, Traces int
}

// Check reports how r differs from the task's expected outcome.
func (t Task) Check(r Result) error {
	var problems []string
	if r.Answer != Answer {
		problems = append(problems, fmt.Sprintf("answer %q, want %q", r.Answer, Answer))
	}
	if len(r.Inputs) != t.Calls {
		problems = append(problems, fmt.Sprintf("%d tool calls, want %d", len(r.Inputs), t.Calls))
	}
	for i, in := range r.Inputs {
		if want := ToolInput(i + 1); in != want {
			problems = append(problems, fmt.Sprintf("tool call %d got %q, want %q", i+1, in, want))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("wrong result: %s", strings.Join(problems, "; "))
	}
	return nil
}

// System is one agent loop set up for the task. Its methods are called by
// one goroutine at a time, in the order Run, Result, Forget for each run.
type System interface {
	// Run runs the task once: the measured work.
	Run(ctx context.Context) error
	// Result returns the outcome of the last run (not yet checked), reading
	// it from where the system keeps it.
	Result(ctx context.Context) (Result, error)
	// Forget drops what the last run left behind (a stored workflow), so
	// the heap and Redis do not grow with the number of runs.
	Forget(ctx context.Context) error
	// Close releases the system.
	Close(ctx context.Context) error
}

// echoLog records one run's echo tool inputs; safe for concurrent use (a
// twostep action runs on an engine worker).
type echoLog struct {
	mu     sync.Mutex
	inputs []string
}

func (l *echoLog) add(s string) {
	l.mu.Lock()
	l.inputs = append(l.inputs, s)
	l.mu.Unlock()
}

// take returns the inputs recorded since the last take and starts afresh.
func (l *echoLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	in := l.inputs
	l.inputs = nil
	return in
}
