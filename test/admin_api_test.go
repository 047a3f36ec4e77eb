package test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/twostep/twostep/adminv1"
	"github.com/twostep/twostep/apiv1"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/workflow"
)

// generate is a Stage 1 reply choosing document.generate.
func generate(objective string) string {
	return enginetest.Select("document.generate", objective, nil, "", "fileName", "content")
}

func generateParams(name, content string) string {
	return enginetest.Params(map[string]any{"fileName": name, "content": content})
}

// TestAdminRenderStage1MatchesTrace: a workflow stopped during its first
// Stage 1 call is paused at select; rendering stage1 gives exactly the
// prompt the engine sent (the trace) and the model received.
func TestAdminRenderStage1MatchesTrace(t *testing.T) {
	t.Parallel()
	env := newAdminEnv(t)
	env.script.blockWhenEmpty(workflow.StageOne)
	id := env.create(t, "Summarise <b>the</b> quarter & list \"risks\"")
	env.waitCalls(t, 1)
	env.stop(t, id)
	traces := env.traces(t, id, 1)
	if traces[0].Stage != string(workflow.StageOne) || !strings.HasPrefix(traces[0].Error, "cancelled") {
		t.Fatalf("first trace = %s %q, want a cancelled stage1 call", traces[0].Stage, traces[0].Error)
	}

	var got adminv1.RenderResult
	env.must(t, http.StatusOK, "POST", "/admin/v1/workflows/"+id+"/render", adminRootToken,
		map[string]any{"stage": "stage1"}, &got)
	if diff := cmp.Diff(traces[0].Prompt, got.Prompt); diff != "" {
		t.Errorf("render differs from the trace's prompt (-trace +render):\n%s", diff)
	}
	if diff := cmp.Diff(wirePrompt(env.model.Calls()[0].Messages), got.Prompt); diff != "" {
		t.Errorf("render differs from what the model received (-model +render):\n%s", diff)
	}
	if got.Template != "stage1" || !strings.Contains(got.Placeholders["USER_PROMPT"], `list "risks"`) {
		t.Errorf("template %q, USER_PROMPT %q", got.Template, got.Placeholders["USER_PROMPT"])
	}
	for _, key := range []string{"AVAILABLE_METHODS", "AVAILABLE_DOCUMENTS_INDEX", "AVAILABLE_CONNECTIONS_INDEX", "WORKFLOW_HISTORY", "VALIDATION_FEEDBACK"} {
		if _, ok := got.Placeholders[key]; !ok {
			t.Errorf("placeholder %s missing", key)
		}
	}
	if !strings.Contains(got.Placeholders["AVAILABLE_CONNECTIONS_INDEX"], "crm") {
		t.Errorf("AVAILABLE_CONNECTIONS_INDEX = %q, want alice's crm connection", got.Placeholders["AVAILABLE_CONNECTIONS_INDEX"])
	}
	assertUnchangedByRender(t, env, id)
}

// assertUnchangedByRender renders every stage again and checks the
// workflow, its messages and traces did not move and no model call was made.
func assertUnchangedByRender(t *testing.T, env *adminEnv, id string) {
	t.Helper()
	before := snapshot(t, env, id)
	calls := len(env.model.Calls())
	for _, stage := range []string{"stage1", "plan", "stage2"} {
		env.call(t, "POST", "/admin/v1/workflows/"+id+"/render", adminRootToken, map[string]any{"stage": stage})
	}
	if diff := cmp.Diff(before, snapshot(t, env, id)); diff != "" {
		t.Errorf("render changed the workflow (-before +after):\n%s", diff)
	}
	if n := len(env.model.Calls()); n != calls {
		t.Errorf("render made %d model calls", n-calls)
	}
}

// TestAdminRenderStage2 renders Stage 2 from the checkpoint (step paused at
// parameterize) and, after the round, from the last accepted Stage 1 trace;
// both are byte-identical to the recorded Stage 2 prompt.
func TestAdminRenderStage2(t *testing.T) {
	t.Parallel()
	env := newAdminEnv(t)
	env.script.push(workflow.StageOne, generate("write the report"))
	env.script.blockWhenEmpty(workflow.StageTwo)
	id := env.create(t, "Write the report")
	env.waitCalls(t, 2)
	env.stop(t, id)
	traces := env.traces(t, id, 2)

	var got adminv1.RenderResult
	env.must(t, http.StatusOK, "POST", "/admin/v1/workflows/"+id+"/render", adminRootToken,
		map[string]any{"stage": "stage2"}, &got)
	if got.Source != "checkpoint" || got.Selection == nil || got.Selection.Action != "document.generate" {
		t.Fatalf("source %q, selection %+v; want the checkpoint's document.generate", got.Source, got.Selection)
	}
	if diff := cmp.Diff(traces[1].Prompt, got.Prompt); diff != "" {
		t.Errorf("stage2 render differs from the stage2 trace (-trace +render):\n%s", diff)
	}
	for _, forbidden := range []string{"USER_PROMPT", "WORKFLOW_HISTORY", "AVAILABLE_DOCUMENTS_INDEX"} {
		if _, ok := got.Placeholders[forbidden]; ok {
			t.Errorf("stage2 placeholders carry %s", forbidden)
		}
	}

	// Resume and finish: Stage 2 fills the report, then workflow.complete.
	env.script.push(workflow.StageTwo, generateParams("report.md", "# Report"))
	env.script.push(workflow.StageOne, enginetest.Completes("done")[0])
	env.script.push(workflow.StageTwo, enginetest.Completes("done")[1])
	env.must(t, http.StatusAccepted, "POST", "/api/v1/workflows/"+id+"/resume", adminAliceToken, nil, nil)
	if wf := env.wait(t, id); wf.Status != workflow.StatusCompleted {
		t.Fatalf("status %s (%s), want completed", wf.Status, wf.Error)
	}
	traces = env.traces(t, id, 5)
	last := traces[len(traces)-1]
	env.must(t, http.StatusOK, "POST", "/admin/v1/workflows/"+id+"/render", adminRootToken,
		map[string]any{"stage": "stage2"}, &got)
	if got.Source != "trace "+traces[len(traces)-2].ID || got.Selection.Action != workflow.CompleteAction {
		t.Fatalf("source %q, action %q; want the last accepted stage1 trace choosing workflow.complete", got.Source, got.Selection.Action)
	}
	if diff := cmp.Diff(last.Prompt, got.Prompt); diff != "" {
		t.Errorf("stage2 render differs from the last stage2 trace (-trace +render):\n%s", diff)
	}
	assertUnchangedByRender(t, env, id)
}

// TestAdminRenderRefusals: stage2 with no selection anywhere is a 409 that
// says why; a bad override template or stage is a 422.
func TestAdminRenderRefusals(t *testing.T) {
	t.Parallel()
	env := newAdminEnv(t)
	env.script.blockWhenEmpty(workflow.StageOne)
	id := env.create(t, "hello")
	env.waitCalls(t, 1)
	env.stop(t, id)
	env.traces(t, id, 1)
	tests := []struct {
		name   string
		body   map[string]any
		status int
		detail string
	}{
		{"stage2 without selection", map[string]any{"stage": "stage2"}, 409, "needs a Stage 1 selection"},
		{"unknown stage", map[string]any{"stage": "action"}, 422, "stage"},
		{"override with a forbidden key", map[string]any{"stage": "stage2", "template": "--- user ---\n{{KEY:WORKFLOW_HISTORY}}"}, 422, "not allowed"},
		{"override without sections", map[string]any{"stage": "stage1", "template": "just text"}, 422, "role divider"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, data := env.call(t, "POST", "/admin/v1/workflows/"+id+"/render", adminRootToken, tc.body)
			if status != tc.status || !bytes.Contains(data, []byte(tc.detail)) {
				t.Errorf("status %d body %s; want %d mentioning %q", status, data, tc.status, tc.detail)
			}
		})
	}
	t.Run("override renders instead of the built-in template", func(t *testing.T) {
		var got adminv1.RenderResult
		env.must(t, http.StatusOK, "POST", "/admin/v1/workflows/"+id+"/render", adminRootToken,
			map[string]any{"stage": "stage1", "template": "--- system ---\nONLY\n--- user ---\nAsk: {{KEY:USER_PROMPT}}"}, &got)
		want := []adminv1.PromptMessage{{Role: "system", Content: "ONLY"}, {Role: "user", Content: "Ask: hello"}}
		if diff := cmp.Diff(want, got.Prompt); diff != "" {
			t.Errorf("override render (-want +got):\n%s", diff)
		}
	})
}

// snapshot is everything a replay or render must leave alone.
type state struct {
	Workflow json.RawMessage
	Messages json.RawMessage
	Traces   json.RawMessage
}

func snapshot(t *testing.T, env *adminEnv, id string) state {
	t.Helper()
	var s state
	for _, p := range []struct {
		path string
		out  *json.RawMessage
	}{{"", &s.Workflow}, {"/messages", &s.Messages}, {"/traces", &s.Traces}} {
		status, data := env.call(t, "GET", "/admin/v1/workflows/"+id+p.path, adminRootToken, nil)
		if status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", p.path, status, data)
		}
		*p.out = data
	}
	return s
}

// TestAdminRenderPlanMatchesTrace: an action-plan workflow stopped during
// its planning call renders the plan prompt the engine sent, with the same
// top-K methods.
func TestAdminRenderPlanMatchesTrace(t *testing.T) {
	t.Parallel()
	env := newAdminEnv(t)
	env.script.blockWhenEmpty(workflow.StagePlan)
	var wf apiv1.WorkflowView
	env.must(t, http.StatusCreated, "POST", "/api/v1/workflows", adminAliceToken,
		map[string]any{"prompt": "Extract the text of the invoice document", "mode": "actionplan"}, &wf)
	env.waitCalls(t, 1)
	env.stop(t, wf.ID)
	traces := env.traces(t, wf.ID, 1)
	if traces[0].Stage != string(workflow.StagePlan) {
		t.Fatalf("first trace is %s, want plan", traces[0].Stage)
	}
	var got adminv1.RenderResult
	env.must(t, http.StatusOK, "POST", "/admin/v1/workflows/"+wf.ID+"/render", adminRootToken,
		map[string]any{"stage": "plan"}, &got)
	if diff := cmp.Diff(traces[0].Prompt, got.Prompt); diff != "" {
		t.Errorf("plan render differs from the plan trace (-trace +render):\n%s", diff)
	}
	if !strings.Contains(got.Placeholders["AVAILABLE_METHODS"], "document.extract") {
		t.Errorf("AVAILABLE_METHODS lacks the most relevant action:\n%s", got.Placeholders["AVAILABLE_METHODS"])
	}
}
