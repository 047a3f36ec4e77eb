package modes_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/modes"
	"github.com/twostep/twostep/workflow"
)

// echoOnce executes its call as every step, with no model call.
type echoOnce struct{ call modes.StepCall }

func (m echoOnce) Step(ctx context.Context, run workflow.Run) error {
	return modes.Execute(ctx, run, m.call, nil)
}

func (echoOnce) Closing(run workflow.Run) workflow.Message { return modes.Closing(run) }

// TestExecuteTracesTheParameters checks the action's trace: its parsed
// JSON is the parameters as json.Marshal writes them (HTML characters and
// line separators escaped, keys sorted), with the action's result.
func TestExecuteTracesTheParameters(t *testing.T) {
	params := map[string]any{"text": "<b>\"quoted\" & é\u2028</b>"}
	store := memstore.New()
	mode := echoOnce{call: modes.StepCall{Action: enginetest.Echo, Objective: "echo it", Parameters: params}}
	e := enginetest.StartEngine(t, enginetest.Config("a"), store, scripted.New(), enginetest.NewRegistry(),
		map[workflow.ModeName]workflow.Mode{workflow.ModeReact: mode})
	wf := enginetest.Wait(t, e, enginetest.Create(t, e, workflow.ModeReact, "echo", 1).ID)
	if wf.StopReason != workflow.StopMaxSteps {
		t.Fatalf("round ended %s/%s (%s), want max_steps", wf.Status, wf.StopReason, wf.Error)
	}
	want, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	var actions []workflow.Trace
	for _, tr := range enginetest.Traces(t, store, wf.ID) {
		if tr.Stage == workflow.StageAction {
			actions = append(actions, tr)
		}
	}
	if len(actions) != 1 {
		t.Fatalf("%d action traces, want 1", len(actions))
	}
	if tr := actions[0]; string(tr.Parsed) != string(want) || tr.Template != enginetest.Echo || tr.Response == "" || tr.Error != "" {
		t.Errorf("action trace: parsed %s, template %q, response %q, error %q; want parsed %s, the echo's template and result", tr.Parsed, tr.Template, tr.Response, tr.Error, want)
	}
}

// An action gets its own copy of its parameters: what it does to them,
// nested values included, reaches neither the mode's map (which the run's
// checkpoint and, with Commit.Handover, the store may hold) nor the step's
// action message.
func TestExecuteGivesTheActionItsOwnParameters(t *testing.T) {
	params := map[string]any{"text": "hello", "nested": map[string]any{"list": []any{"a"}}}
	reg := enginetest.NewRegistry()
	reg.ExecuteFunc = func(_ context.Context, call workflow.ActionCall) (workflow.ActionResult, error) {
		call.Parameters["text"] = "changed by the action"
		nested := call.Parameters["nested"].(map[string]any)
		nested["list"].([]any)[0] = "changed"
		nested["added"] = true
		return workflow.ActionResult{Text: "done"}, nil
	}
	store := memstore.New()
	mode := echoOnce{call: modes.StepCall{Action: enginetest.Echo, Objective: "echo it", Parameters: params}}
	e := enginetest.StartEngine(t, enginetest.Config("a"), store, scripted.New(), reg,
		map[workflow.ModeName]workflow.Mode{workflow.ModeReact: mode})
	wf := enginetest.Wait(t, e, enginetest.Create(t, e, workflow.ModeReact, "echo", 1).ID)
	want := map[string]any{"text": "hello", "nested": map[string]any{"list": []any{"a"}}}
	if !reflect.DeepEqual(params, want) {
		t.Errorf("the mode's parameters after the action: %#v, want %#v", params, want)
	}
	var action *workflow.Message
	for _, m := range enginetest.Messages(t, store, wf.ID) {
		if m.Role == workflow.RoleAction {
			action = &m
		}
	}
	if action == nil || !reflect.DeepEqual(action.Parameters, want) {
		t.Fatalf("the action message's parameters: %#v, want %#v", action, want)
	}
}
