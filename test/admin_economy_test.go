package test

import (
	"net/http"
	"testing"

	"github.com/twostep/twostep/adminv1"
	"github.com/twostep/twostep/economy"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm"
	"github.com/twostep/twostep/workflow"
)

// The economy route for a small scripted workflow (two generated
// documents, then the answer) through the wired gateway: each step's
// Stage 1 and Stage 2 figures are its traces', the totals every kept call
// but the actions', the plain loop's output the two tool calls and the
// answer as the loop's model would write them, counted with the counter
// the gateway wires (cl100k_base, llm.Tokenizer), and no dollars without
// prices (the ratio in equivalent tokens).
func TestAdminEconomyOfScriptedWorkflow(t *testing.T) {
	t.Parallel()
	env := newAdminEnv(t)
	env.script.push(workflow.StageOne, generate("first"), generate("second"), enginetest.Completes("done")[0])
	env.script.push(workflow.StageTwo, generateParams("a.md", "# A alpha"), generateParams("b.md", "# B beta gamma"),
		enginetest.Completes("done")[1])
	id := env.create(t, "Write two notes")
	if wf := env.wait(t, id); wf.Status != workflow.StatusCompleted || wf.Step != 3 {
		t.Fatalf("status %s step %d (%s)", wf.Status, wf.Step, wf.Error)
	}
	traces := env.traces(t, id, 8) // 3 × (Stage 1 + Stage 2), 2 action runs

	var got adminv1.EconomyView
	env.must(t, http.StatusOK, "GET", "/admin/v1/workflows/"+id+"/economy", adminRootToken, nil, &got)
	if len(got.Steps) != 3 {
		t.Fatalf("steps %+v, want 3", got.Steps)
	}
	var totals economy.Tokens
	for _, tr := range traces {
		if tr.Stage == string(workflow.StageAction) {
			continue
		}
		totals.Input += tr.PromptTokens
		totals.Output += tr.CompletionTokens
		s := got.Steps[tr.Step-1]
		stage := map[workflow.Stage]adminv1.EconomyTokens{workflow.StageOne: s.Stage1, workflow.StageTwo: s.Stage2}[workflow.Stage(tr.Stage)]
		if stage.Input != tr.PromptTokens || stage.Output != tr.CompletionTokens || s.Stage2Skipped {
			t.Errorf("step %d %s: %+v (skipped %v), want the trace's %d in, %d out", tr.Step, tr.Stage, stage, s.Stage2Skipped,
				tr.PromptTokens, tr.CompletionTokens)
		}
	}
	if got.Totals.Input != totals.Input || got.Totals.Output != totals.Output || got.Totals.USD != nil {
		t.Errorf("totals %+v, want %d in, %d out and no dollars", got.Totals, totals.Input, totals.Output)
	}
	count := (&llm.Tokenizer{}).Count
	out := count(`{"name":"document.generate","arguments":{"content":"# A alpha","fileName":"a.md"}}`) +
		count(`{"name":"document.generate","arguments":{"content":"# B beta gamma","fileName":"b.md"}}`) + count("done")
	if got.PlainLoop.Output != out || got.PlainLoop.Input <= 0 || got.PlainLoop.USD != nil {
		t.Errorf("plain loop %+v, want %d out, some input, no dollars", got.PlainLoop, out)
	}
	ratio := economy.Ratio(economy.Cost{Input: got.Totals.Input, Cached: got.Totals.Cached, Output: got.Totals.Output},
		economy.Cost{Input: got.PlainLoop.Input, Cached: got.PlainLoop.Cached, Output: got.PlainLoop.Output})
	if want := ratio; got.CostRatio != want || want == 0 {
		t.Errorf("costRatio %v, want %v in equivalent tokens", got.CostRatio, want)
	}
}
