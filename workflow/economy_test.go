package workflow_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/twostep/twostep/workflow"
)

// A two-step round, counted in bytes so the figures can be checked by hand.
func TestComputeEconomyHandComputed(t *testing.T) {
	t.Parallel()
	doc := workflow.Document{ID: "doc_1", Name: "a.txt"}
	out := workflow.Document{ID: "doc_2", Name: "b.txt"}
	in := workflow.EconomyInput{
		Traces: []workflow.Trace{
			{Round: 1, Step: 1, Stage: workflow.StageOne, Attempt: 1, PromptTokens: 100},
			{Round: 1, Step: 1, Stage: workflow.StageOne, Attempt: 2, PromptTokens: 110}, // a retry counts
			{Round: 1, Step: 1, Stage: workflow.StageTwo, Attempt: 1, PromptTokens: 30},
			{Round: 1, Step: 1, Stage: workflow.StageAction, Attempt: 1, PromptTokens: 7},
			{Round: 1, Step: 2, Stage: workflow.StageOne, Attempt: 1, PromptTokens: 150},
			{Round: 1, Step: 2, Stage: workflow.StageTwo, Attempt: 1, PromptTokens: 20},
		},
		Messages: []workflow.Message{
			{Round: 1, Step: 0, Role: workflow.RoleUser, Text: "sum it", Documents: []workflow.Document{doc}}, // 6
			{Round: 1, Step: 1, Role: workflow.RoleAction, Action: "x.y", ActionObjective: "obj",
				Parameters: map[string]any{"a": 1}, Text: "res", Documents: []workflow.Document{out}},
			{Round: 1, Step: 3, Role: workflow.RoleAssistant, Text: "done"},
		},
		Count: func(s string) int { return len(s) },
		DocumentText: func(d workflow.Document) string {
			return map[string]string{"doc_1": "0123456789", "doc_2": "abcde"}[d.ID]
		},
	}
	// The base is round 1's first Stage 1 call: 100 (the retry's 110 is not).
	// Step 1: 100 + doc_1 10 = 110.
	// Step 2: 110 + "Thought: obj\nAction: x.y {\"a\":1}\nObservation: res" (12+1+19+1+16 = 49) + doc_2 5 = 164.
	want := workflow.Economy{
		Steps: []workflow.EconomyStep{
			{Round: 1, Step: 1, Stage1Tokens: 210, Stage2Tokens: 30, NaiveTokens: 110},
			{Round: 1, Step: 2, Stage1Tokens: 150, Stage2Tokens: 20, NaiveTokens: 164},
		},
		Totals:             workflow.EconomyTotals{Stage1Tokens: 360, Stage2Tokens: 50, PromptTokens: 417},
		NaiveReactEstimate: 274,
		Ratio:              410.0 / 274,
	}
	if diff := cmp.Diff(want, workflow.ComputeEconomy(in)); diff != "" {
		t.Errorf("economy (-want +got):\n%s", diff)
	}
	if got := workflow.ComputeEconomy(workflow.EconomyInput{Count: in.Count}); len(got.Steps) != 0 || got.Ratio != 0 || got.Steps == nil {
		t.Errorf("economy of nothing = %+v, want no steps ([]), ratio 0", got)
	}
}
