package react_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/workflow"
)

// selectByName is a Stage 1 reply choosing the echo with fields given by
// name alone.
func selectByName(names ...string) string {
	fields := make([]map[string]any, len(names))
	for i, n := range names {
		fields[i] = map[string]any{"name": n}
	}
	b, _ := json.Marshal(map[string]any{
		"action": enginetest.Echo, "actionObjective": "Echo the word.", "learnings": []string{},
		"requiredInputDocuments": []string{}, "requiredConnection": nil, "parametersContext": "The word is hello.",
		"parametersSchema": map[string]any{"fields": fields},
	})
	return string(b)
}

// A field the action registers may be named alone: the step runs, and
// Stage 2 sees the action's own schema for it. A field named alone that
// the action does not register is fed back, and the retry is accepted.
func TestFieldsByNameInARound(t *testing.T) {
	t.Parallel()
	store, reg := newStore(), enginetest.NewRegistry()
	model := scripted.New(replies(
		[]string{selectByName("text", "tone"), selectByName("text"), enginetest.Params(map[string]any{"text": "hello"})},
		enginetest.Completes("done"),
	)...)
	e := startEngine(t, testConfig("a"), store, model, reg)
	wf := wait(t, e, create(t, e, "echo hello", 5).ID)
	if wf.Status != workflow.StatusCompleted {
		t.Fatalf("round ended %s (%s)", wf.Status, wf.Error)
	}
	calls := model.Calls()
	want := []workflow.Stage{workflow.StageOne, workflow.StageOne, workflow.StageTwo, workflow.StageOne, workflow.StageTwo}
	if diff := cmp.Diff(want, stages(calls)); diff != "" {
		t.Fatalf("model calls (-want +got):\n%s", diff)
	}
	if retry := calls[1].Text(); !strings.Contains(retry, `parametersSchema field "tone": test.echo does not register it`) {
		t.Errorf("the retry's feedback does not name the unregistered field:\n%s", retry)
	}
	if s2 := calls[2].Text(); !strings.Contains(s2, `"text": {"type":"string"}`) {
		t.Errorf("Stage 2 does not show the registered parameter:\n%s", s2)
	}
	if ex := reg.Calls(); len(ex) != 1 || ex[0].Parameters["text"] != "hello" {
		t.Errorf("executions = %+v, want one echo of hello", ex)
	}
}
