package economy_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/twostep/twostep/economy"
	"github.com/twostep/twostep/workflow"
)

// byteCount counts a byte as a token, so the figures can be checked by hand.
func byteCount(s string) int { return len(s) }

// smallWorkflow is a two-step round: step 1 runs x.y (Stage 1 and Stage 2),
// step 2 completes without a Stage 2 call; a compaction call and the
// action's own call are traced too.
func smallWorkflow() economy.Input {
	rules := strings.Repeat("r", 1200)
	stage1 := func(step, tokens, out int, history string) workflow.Trace {
		return workflow.Trace{Round: 1, Step: step, Stage: workflow.StageOne, Attempt: 1, Model: "p/m",
			Prompt:       []workflow.PromptMessage{{Role: "system", Content: rules}, {Role: "user", Content: history}},
			PromptTokens: tokens, CompletionTokens: out}
	}
	return economy.Input{
		Traces: []workflow.Trace{
			stage1(1, 1300, 40, "H1"),
			{Round: 1, Step: 1, Stage: workflow.StageTwo, Attempt: 1, Model: "p/m",
				Prompt: []workflow.PromptMessage{{Role: "system", Content: "fill"}}, PromptTokens: 200, CompletionTokens: 10},
			{Round: 1, Step: 1, Stage: workflow.StageAction, Attempt: 1, Model: "p/m", PromptTokens: 7, CompletionTokens: 7},
			{Round: 1, Step: 2, Stage: workflow.StageCompact, Attempt: 1, Model: "p/m", PromptTokens: 100, CompletionTokens: 5},
			stage1(2, 1350, 30, "H1 H2"),
		},
		Messages: []workflow.Message{
			{Round: 1, Role: workflow.RoleUser, Text: "sum it", Documents: []workflow.Document{{ID: "doc_1", Name: "a.txt"}}},
			{Round: 1, Step: 1, Role: workflow.RoleAction, Action: "x.y", Parameters: map[string]any{"a": 1}, Text: "res",
				Documents: []workflow.Document{{ID: "doc_2", Name: "b.txt"}}},
			{Round: 1, Step: 2, Role: workflow.RoleAssistant, Text: "done"},
		},
		Actions: []workflow.ActionSpec{
			{Name: "x.y", Description: "d", Parameters: []byte(`{"type":"object"}`)},
			{Name: workflow.CompleteAction, Description: "ends", Parameters: []byte(`{"type":"object"}`)},
		},
		Count: byteCount,
		DocumentText: func(d workflow.Document) string {
			return map[string]string{"doc_1": "never sent: an upload is named, not read", "doc_2": strings.Repeat("z", 1100)}[d.ID]
		},
	}
}

func usd(v float64) *float64 { return &v }

// near reports whether a and b are equal but for rounding.
func near(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 }

// The report's arithmetic on a small workflow, by hand (a byte is a token).
func TestComputeHandComputed(t *testing.T) {
	t.Parallel()
	in := smallWorkflow()
	in.Prices = economy.Prices{"p/m": {Input: 3, CachedInput: 0.3, Output: 15}}
	// Stage 1, step 1: the first request of its stage, nothing cached.
	// Stage 1, step 2: its text shares "system: " + 1,200 rules + "\nuser: H1"
	// (8 + 1200 + 1 + 8 = 1,217 tokens) with step 1's; the prompt has 1,350
	// ≥ 1,024 tokens, so 9 blocks of 128 = 1,152 are cached.
	// Stage 2 (200) and the compaction (100) are under 1,024: none cached.
	// Totals: input 1300 + 200 + 100 + 1350 = 2,950, cached 1,152, output
	// 40 + 10 + 5 + 30 = 85 (the action's own call is left out);
	// $ = (1798 × 3 + 1152 × 0.3 + 85 × 15) / 1e6 = 0.0070146.
	//
	// Plain loop: tools `tools: [{"type":"function","function":{"name":"x.y",
	// "description":"d","parameters":{"type":"object"}}}]` (103, complete left
	// out) + "\nsystem: " (9) + the system prompt (134) = 246;
	// + "\nuser: sum it\nAttached: a.txt (doc_1)" (37) = 283, step 1's input;
	// its output {"name":"x.y","arguments":{"a":1}} is 34.
	// Step 2 adds "\nassistant: " (12) + the call (34) + "\ntool: res" (10)
	// + "\n\n" (2) + doc_2's 1,100 = 1,158: input 1,441 ≥ 1,024, but only
	// its first 283 were sent by step 1, under the 1,024 a provider caches
	// at least: none cached; output "done", 4.
	// Plain: input 1,724, cached 0, output 38;
	// $ = (1724 × 3 + 38 × 15) / 1e6 = 0.005742.
	want := economy.Report{
		Steps: []economy.Step{
			{Round: 1, Step: 1, Stage1: economy.Tokens{Input: 1300, Output: 40}, Stage2: economy.Tokens{Input: 200, Output: 10}},
			{Round: 1, Step: 2, Stage1: economy.Tokens{Input: 1350, Cached: 1152, Output: 30}, Stage2Skipped: true},
		},
		Totals:    economy.Cost{Input: 2950, Cached: 1152, Output: 85, USD: usd(0.0070146)},
		PlainLoop: economy.Cost{Input: 1724, Cached: 0, Output: 38, USD: usd(0.005742)},
		CostRatio: 0.0070146 / 0.005742,
	}
	if diff := cmp.Diff(want, economy.Compute(in), cmp.Comparer(near)); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}

	// Without a price for the model: no dollars, the ratio in equivalent
	// tokens: (1798 + 0.1 × 1152 + 5 × 85) / (1724 + 5 × 38).
	in.Prices = economy.Prices{"other/model": {Input: 1}}
	got := economy.Compute(in)
	if got.Totals.USD != nil || got.PlainLoop.USD != nil {
		t.Errorf("dollars without a price: totals %v, plain loop %v", got.Totals.USD, got.PlainLoop.USD)
	}
	if w := (1798 + 115.2 + 425) / (1724.0 + 190); !near(got.CostRatio, w) {
		t.Errorf("costRatio = %v, want %v", got.CostRatio, w)
	}
}
