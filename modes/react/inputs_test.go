package react_test

import (
	"strings"
	"testing"

	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/templates"
	"github.com/twostep/twostep/workflow"
)

// Stage 1 and Stage 2 traces keep the placeholder values their prompt was
// rendered from, and the template rendered with them again gives the
// recorded prompt byte for byte: what datasets and experiments rely on.
func TestTracesKeepTheirInputs(t *testing.T) {
	t.Parallel()
	store := newStore()
	model := scripted.New(replies(enginetest.Echoes("hi"), enginetest.Completes("done"))...)
	e := startEngine(t, testConfig("a"), store, model, enginetest.NewRegistry())
	wf := wait(t, e, create(t, e, "echo hi", 5).ID)
	set, err := templates.Load("")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[workflow.Stage]int{}
	for _, tr := range enginetest.Traces(t, store, wf.ID) {
		if tr.Stage != workflow.StageOne && tr.Stage != workflow.StageTwo {
			continue
		}
		seen[tr.Stage]++
		if tr.Inputs == nil {
			t.Fatalf("%s trace %s has no inputs", tr.Stage, tr.ID)
		}
		tmpl, err := set.Get(tr.Template)
		if err != nil {
			t.Fatal(err)
		}
		r, err := prompts.RenderTemplate(tmpl, tr.Inputs)
		if err != nil {
			t.Fatalf("%s: rendering the recorded inputs: %v", tr.Stage, err)
		}
		if len(r.Messages) != len(tr.Prompt) {
			t.Fatalf("%s: %d messages, recorded %d", tr.Stage, len(r.Messages), len(tr.Prompt))
		}
		for i := range r.Messages {
			if r.Messages[i] != tr.Prompt[i] {
				t.Errorf("%s message %d differs:\n got %q\nwant %q", tr.Stage, i, r.Messages[i].Content, tr.Prompt[i].Content)
			}
		}
	}
	if seen[workflow.StageOne] == 0 || seen[workflow.StageTwo] == 0 {
		t.Errorf("traces by stage %v, want Stage 1 and Stage 2", seen)
	}
	if in := enginetest.Traces(t, store, wf.ID)[0].Inputs; !strings.Contains(in[templates.KeyUserPrompt], "echo hi") {
		t.Errorf("USER_PROMPT = %q", in[templates.KeyUserPrompt])
	}
}
