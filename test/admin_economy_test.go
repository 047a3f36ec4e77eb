package test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/twostep/twostep/httpapi"
	"github.com/twostep/twostep/llm"
	"github.com/twostep/twostep/workflow"
	"github.com/twostep/twostep/workflow/enginetest"
)

// The economy route for a small scripted workflow (two generated
// documents, then the answer) gives, step by step, the traces' Stage 1
// and Stage 2 prompt tokens and the naive estimate worked out here from
// the README's definition, with the counter the gateway wires (cl100k_base,
// llm.Tokenizer).
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
	var msgs httpapi.MessageList
	env.must(t, http.StatusOK, "GET", "/admin/v1/workflows/"+id+"/messages", adminRootToken, nil, &msgs)

	count := (&llm.Tokenizer{}).Count
	want := workflow.Economy{Steps: []workflow.EconomyStep{}}
	for _, tr := range traces {
		switch tr.Stage {
		case workflow.StageOne, workflow.StageTwo:
			for len(want.Steps) < tr.Step {
				want.Steps = append(want.Steps, workflow.EconomyStep{Round: 1, Step: len(want.Steps) + 1})
			}
			s := &want.Steps[tr.Step-1]
			if tr.Stage == workflow.StageOne {
				s.Stage1Tokens += tr.PromptTokens
			} else {
				s.Stage2Tokens += tr.PromptTokens
			}
		}
		want.Totals.PromptTokens += tr.PromptTokens
	}
	// The action messages of steps 1 and 2 and their documents' text.
	records := map[int]int{}
	for _, m := range msgs.Messages {
		if m.Role != workflow.RoleAction {
			continue
		}
		params := map[int]string{1: `{"content":"# A alpha","fileName":"a.md"}`, 2: `{"content":"# B beta gamma","fileName":"b.md"}`}[m.Step]
		doc := map[int]string{1: "# A alpha", 2: "# B beta gamma"}[m.Step]
		records[m.Step] = count(fmt.Sprintf("Thought: %s\nAction: document.generate %s\nObservation: %s", m.ActionObjective, params, m.Text)) +
			count(doc)
	}
	base := want.Steps[0].Stage1Tokens
	for i := range want.Steps {
		s := &want.Steps[i]
		s.NaiveTokens = base
		for step := 1; step < s.Step; step++ {
			s.NaiveTokens += records[step]
		}
		want.Totals.Stage1Tokens += s.Stage1Tokens
		want.Totals.Stage2Tokens += s.Stage2Tokens
		want.NaiveReactEstimate += s.NaiveTokens
	}
	want.Ratio = float64(want.Totals.Stage1Tokens+want.Totals.Stage2Tokens) / float64(want.NaiveReactEstimate)

	var got workflow.Economy
	env.must(t, http.StatusOK, "GET", "/admin/v1/workflows/"+id+"/economy", adminRootToken, nil, &got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("economy (-want +got):\n%s", diff)
	}
	if len(got.Steps) != 3 || len(records) != 2 || got.Steps[2].NaiveTokens <= got.Steps[1].NaiveTokens {
		t.Errorf("steps %+v, records %v: want 3 steps with a growing estimate", got.Steps, records)
	}
}
