package economy

import (
	"testing"

	"github.com/twostep/twostep/workflow"
)

// A step's discarded early Stage 2 counts in its Stage 2 tokens and its
// count, and its latency is measured from its calls' starts and ends: an
// early Stage 2 overlapping Stage 1 shortens it.
func TestStepCountsDiscardedCallsAndMeasuresLatency(t *testing.T) {
	traces := []workflow.Trace{
		{Round: 1, Step: 1, Stage: workflow.StageOne, PromptTokens: 100, CompletionTokens: 10, LatencyMs: 900},
		{Round: 1, Step: 1, Stage: workflow.StageTwo, PromptTokens: 40, CompletionTokens: 5, StartedAtMs: 600, LatencyMs: 100, OverlapMs: 100, Discarded: true},
		{Round: 1, Step: 1, Stage: workflow.StageTwo, PromptTokens: 40, CompletionTokens: 5, StartedAtMs: 950, LatencyMs: 300},
		{Round: 1, Step: 2, Stage: workflow.StageOne, PromptTokens: 100, CompletionTokens: 10, LatencyMs: 800},
		{Round: 1, Step: 2, Stage: workflow.StageTwo, PromptTokens: 40, CompletionTokens: 5, StartedAtMs: 500, LatencyMs: 400, OverlapMs: 300},
	}
	rep := Compute(Input{Traces: traces, Count: func(s string) int { return len(s) }})
	if len(rep.Steps) != 2 {
		t.Fatalf("steps %+v", rep.Steps)
	}
	s1, s2 := rep.Steps[0], rep.Steps[1]
	if s1.Discarded != 1 || s1.Stage2.Input != 80 || s1.LatencyMs != 1250 {
		t.Errorf("step 1: %+v; want 1 discarded, both Stage 2 calls' 80 input tokens, 1,250 ms", s1)
	}
	if s2.Discarded != 0 || s2.LatencyMs != 900 {
		t.Errorf("step 2: %+v; want none discarded and 900 ms (Stage 2 overlapping)", s2)
	}
}
