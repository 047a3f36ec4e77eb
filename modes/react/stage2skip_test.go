package react_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/workflow"
)

// A step whose action has no parameter to fill (Stage 1 asked for none,
// the action requires none) runs with {} and makes no Stage 2 call: the
// model is asked Stage 1 only, and the step has no stage2 trace (DESIGN
// §10.1). A step that asks for a field still gets its Stage 2 call.
func TestNothingToFillSkipsStage2(t *testing.T) {
	t.Parallel()
	const ping = "test.ping"
	reg := enginetest.NewRegistry()
	reg.Specs = append(reg.Specs, workflow.ActionSpec{
		Name: ping, Description: "Checks that the system answers.", Effect: workflow.EffectRead, Documents: workflow.DocumentsNone,
		Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"additionalProperties":false}`),
	})
	reg.ExecuteFunc = func(_ context.Context, call workflow.ActionCall) (workflow.ActionResult, error) {
		return workflow.ActionResult{Text: "pong"}, nil
	}
	store := newStore()
	model := scripted.New(replies(
		[]string{enginetest.Select(ping, "check the system", nil, "")},
		[]string{enginetest.Select(ping, "check with a text", nil, "", "text"), enginetest.Params(map[string]any{"text": "hi"})},
		enginetest.Completes("it answers"),
	)...)
	e := startEngine(t, testConfig("a"), store, model, reg)
	wf := wait(t, e, create(t, e, "is it up?", 5).ID)
	if wf.Status != workflow.StatusCompleted {
		t.Fatalf("round ended %s/%s (%s)", wf.Status, wf.StopReason, wf.Error)
	}
	want := []workflow.Stage{workflow.StageOne, workflow.StageOne, workflow.StageTwo, workflow.StageOne, workflow.StageTwo}
	if diff := cmp.Diff(want, stages(model.Calls())); diff != "" {
		t.Errorf("model calls (-want +got):\n%s", diff)
	}
	for _, tr := range enginetest.Traces(t, store, wf.ID) {
		if tr.Step == 1 && tr.Stage == workflow.StageTwo {
			t.Errorf("step 1 has a stage2 trace: %+v", tr)
		}
	}
	calls := reg.Calls()
	if len(calls) != 2 || calls[0].Parameters == nil || len(calls[0].Parameters) != 0 || calls[1].Parameters["text"] != "hi" {
		t.Errorf("executions = %+v, want ping with {} then with the text", calls)
	}
}
