package test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/twostep/twostep/adminv1"
	"github.com/twostep/twostep/apiv1"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/redact"
	"github.com/twostep/twostep/workflow"
)

// completedWorkflow runs one round: document.generate, then
// workflow.complete. Its traces are stage1, stage2, action, stage1, stage2.
func completedWorkflow(t *testing.T, env *adminEnv, prompt string) (string, []adminv1.TraceView) {
	t.Helper()
	env.script.push(workflow.StageOne, generate("write the notes"), enginetest.Completes("all done")[0])
	env.script.push(workflow.StageTwo, generateParams("notes.md", "# Notes"), enginetest.Completes("all done")[1])
	id := env.create(t, prompt)
	if wf := env.wait(t, id); wf.Status != workflow.StatusCompleted {
		t.Fatalf("status %s (%s), want completed", wf.Status, wf.Error)
	}
	traces := env.traces(t, id, 5)
	var stages []workflow.Stage
	for _, tr := range traces {
		stages = append(stages, workflow.Stage(tr.Stage))
	}
	if diff := cmp.Diff([]workflow.Stage{"stage1", "stage2", "action", "stage1", "stage2"}, stages); diff != "" {
		t.Fatalf("trace stages (-want +got):\n%s", diff)
	}
	return id, traces
}

// TestAdminReplay: replay sends the recorded (or edited) prompt to the
// model now, parses the reply as its stage does, and leaves the workflow,
// its messages and its traces exactly as they were.
func TestAdminReplay(t *testing.T) {
	t.Parallel()
	env := newAdminEnv(t)
	id, traces := completedWorkflow(t, env, "Write notes")
	before := snapshot(t, env, id)
	edited := []adminv1.PromptMessage{{Role: "system", Content: "edited system"}, {Role: "user", Content: "edited user"}}

	tests := []struct {
		name      string
		trace     adminv1.TraceView
		reply     string
		body      map[string]any
		wantSent  []adminv1.PromptMessage
		wantError string // substring; "" means accepted
		wantKey   string // a key of the parsed JSON
	}{
		{"stage1 as recorded, accepted", traces[0], generate("again"), nil, traces[0].Prompt, "", "action"},
		{"stage1 edited prompt", traces[0], generate("edited"), map[string]any{"prompt": edited}, edited, "", "actionObjective"},
		{"stage1 rejected reply", traces[0], `{"action": "no.such", "parameters": {"x": 1}}`, nil, traces[0].Prompt, "parameters", "action"},
		{"stage2 validated against the step's action", traces[1], generateParams("", "x"), nil, traces[1].Prompt, "fileName", "parameters"},
		{"stage2 accepted", traces[4], enginetest.Completes("bye")[1], nil, traces[4].Prompt, "", "schema"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env.script.push(workflow.Stage(tc.trace.Stage), tc.reply)
			body := tc.body
			if body == nil {
				body = map[string]any{}
			}
			var got adminv1.ReplayResult
			env.must(t, http.StatusOK, "POST", "/admin/v1/traces/"+tc.trace.ID+"/replay", adminRootToken, body, &got)
			calls := env.model.Calls()
			if diff := cmp.Diff(tc.wantSent, wirePrompt(calls[len(calls)-1].Messages)); diff != "" {
				t.Errorf("prompt sent (-want +got):\n%s", diff)
			}
			if got.Response != tc.reply {
				t.Errorf("response %q, want %q", got.Response, tc.reply)
			}
			if (tc.wantError == "") != (got.Error == "") || !strings.Contains(got.Error, tc.wantError) {
				t.Errorf("error %q, want one containing %q", got.Error, tc.wantError)
			}
			var parsed map[string]any
			if err := json.Unmarshal(got.Parsed, &parsed); err != nil || parsed[tc.wantKey] == nil {
				t.Errorf("parsed %s lacks %q (%v)", got.Parsed, tc.wantKey, err)
			}
			if got.Model == "" || got.PromptTokens == 0 {
				t.Errorf("model %q, prompt tokens %d", got.Model, got.PromptTokens)
			}
			// The replay sends the stage's output schema, as the engine does;
			// the scripted model answers in text mode.
			want := map[workflow.Stage]string{workflow.StageOne: prompts.Stage1SchemaName, workflow.StageTwo: prompts.Stage2SchemaName}[workflow.Stage(tc.trace.Stage)]
			if out := calls[len(calls)-1].Output; out == nil || out.Name != want || !out.Strict || got.OutputMode != "text" {
				t.Errorf("replay sent output schema %+v, result mode %q; want %s (strict), text", out, got.OutputMode, want)
			}
		})
	}
	t.Run("model failure is a result", func(t *testing.T) {
		var got adminv1.ReplayResult // nothing scripted: the model answers Unavailable
		env.must(t, http.StatusOK, "POST", "/admin/v1/traces/"+traces[0].ID+"/replay", adminRootToken, nil, &got)
		if !strings.Contains(got.Error, "could not answer") || got.Response != "" {
			t.Errorf("error %q response %q", got.Error, got.Response)
		}
	})
	t.Run("action trace", func(t *testing.T) {
		status, data := env.call(t, "POST", "/admin/v1/traces/"+traces[2].ID+"/replay", adminRootToken, nil)
		if status != http.StatusUnprocessableEntity || !strings.Contains(string(data), "not a model call") {
			t.Errorf("status %d %s, want 422", status, data)
		}
	})
	t.Run("unknown trace", func(t *testing.T) {
		status, _ := env.call(t, "POST", "/admin/v1/traces/tr_01ARZ3NDEKTSV4RRFFQ69G5FAV/replay", adminRootToken, nil)
		if status != http.StatusNotFound {
			t.Errorf("status %d, want 404", status)
		}
	})
	if diff := cmp.Diff(before, snapshot(t, env, id)); diff != "" {
		t.Errorf("replay changed the workflow (-before +after):\n%s", diff)
	}
}

// TestAdminReads covers the list (all users, newest first, by userId), one
// trace, the messages and the templates.
func TestAdminReads(t *testing.T) {
	t.Parallel()
	env := newAdminEnv(t)
	first, traces := completedWorkflow(t, env, "first")
	second, _ := completedWorkflow(t, env, "second")

	var list adminv1.AdminWorkflowList
	env.must(t, http.StatusOK, "GET", "/admin/v1/workflows", adminRootToken, nil, &list)
	if len(list.Workflows) != 2 || list.Workflows[0].ID != second || list.Workflows[1].ID != first {
		t.Fatalf("list = %+v, want [second first]", list.Workflows)
	}
	env.must(t, http.StatusOK, "GET", "/admin/v1/workflows?userId=bob", adminRootToken, nil, &list)
	if len(list.Workflows) != 0 {
		t.Errorf("bob's list = %+v, want empty", list.Workflows)
	}
	env.must(t, http.StatusOK, "GET", "/admin/v1/workflows?userId=alice&limit=1", adminRootToken, nil, &list)
	if len(list.Workflows) != 1 || list.Workflows[0].ID != second || list.NextCursor == "" {
		t.Errorf("alice page 1 = %+v next %q", list.Workflows, list.NextCursor)
	}
	if status, _ := env.call(t, "GET", "/admin/v1/workflows?cursor=abc", adminRootToken, nil); status != 422 {
		t.Errorf("cursor without userId: %d, want 422", status)
	}

	var tr adminv1.TraceView
	env.must(t, http.StatusOK, "GET", "/admin/v1/traces/"+traces[1].ID, adminRootToken, nil, &tr)
	if diff := cmp.Diff(traces[1], tr); diff != "" {
		t.Errorf("trace by id (-list +get):\n%s", diff)
	}
	var msgs apiv1.MessageList
	env.must(t, http.StatusOK, "GET", "/admin/v1/workflows/"+first+"/messages", adminRootToken, nil, &msgs)
	roles := []string{}
	for _, m := range msgs.Messages {
		roles = append(roles, m.Role)
	}
	if diff := cmp.Diff([]string{"user", "action", "assistant"}, roles); diff != "" {
		t.Errorf("message roles (-want +got):\n%s", diff)
	}
	var tpl adminv1.TemplateList
	env.must(t, http.StatusOK, "GET", "/admin/v1/templates", adminRootToken, nil, &tpl)
	names := map[string]bool{}
	for _, x := range tpl.Templates {
		names[x.Name] = x.Source != "" && len(x.Keys) > 0
	}
	for _, n := range []string{"stage1", "stage2", "plan", "repair"} {
		if !names[n] {
			t.Errorf("template %s missing or empty in %v", n, names)
		}
	}
}

// TestAdminAuth: every admin route answers 401 without a token and 403
// with a user token; the page's own files load without one.
func TestAdminAuth(t *testing.T) {
	t.Parallel()
	env := newAdminEnv(t)
	wf := "/admin/v1/workflows/wf_01ARZ3NDEKTSV4RRFFQ69G5FAV"
	routes := []struct{ method, path string }{
		{"GET", "/admin/v1/workflows"}, {"GET", wf}, {"GET", wf + "/messages"}, {"GET", wf + "/traces"},
		{"POST", wf + "/render"}, {"GET", "/admin/v1/traces/tr_01ARZ3NDEKTSV4RRFFQ69G5FAV"},
		{"POST", "/admin/v1/traces/tr_01ARZ3NDEKTSV4RRFFQ69G5FAV/replay"}, {"GET", "/admin/v1/templates"},
	}
	for _, r := range routes {
		t.Run(r.method+" "+r.path, func(t *testing.T) {
			body := map[string]any{"stage": "stage1"}
			if s, _ := env.call(t, r.method, r.path, "", body); s != http.StatusUnauthorized {
				t.Errorf("no token: %d, want 401", s)
			}
			if s, _ := env.call(t, r.method, r.path, adminAliceToken, body); s != http.StatusForbidden {
				t.Errorf("user token: %d, want 403", s)
			}
			if s, data := env.call(t, r.method, r.path, adminRootToken, body); s == 401 || s == 403 || s >= 500 {
				t.Errorf("admin token: %d %s", s, data)
			}
		})
	}
	for _, p := range []string{"/admin/", "/admin/app.js", "/admin/app.css"} {
		resp, err := http.Get(env.url + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Security-Policy") == "" {
			t.Errorf("GET %s: %d, CSP %q", p, resp.StatusCode, resp.Header.Get("Content-Security-Policy"))
		}
	}
}

// TestAdminRedaction: a user prompt and model replies carrying a
// connection header secret and an API key are stored with both redacted,
// in every field of every trace, and no admin answer shows them.
func TestAdminRedaction(t *testing.T) {
	t.Parallel()
	env := newAdminEnv(t)
	leak := "key " + adminAPIKeyMarker + " and header " + adminConnSecretMarker
	env.script.push(workflow.StageOne, generate("store "+leak), enginetest.Completes(leak)[0])
	env.script.push(workflow.StageTwo, generateParams("leak.txt", leak), enginetest.Completes(leak)[1])
	id := env.create(t, "Please use "+leak)
	if wf := env.wait(t, id); wf.Status != workflow.StatusCompleted {
		t.Fatalf("status %s (%s)", wf.Status, wf.Error)
	}
	stored, err := env.raw.Traces(context.Background(), id)
	if err != nil || len(stored) != 5 {
		t.Fatalf("stored traces: %d, %v", len(stored), err)
	}
	markers := []string{adminAPIKeyMarker, adminConnSecretMarker, "sk-MARKER\\u003c\\u0026\\u003eapikey", "MARKER"}
	redacted := 0
	for _, tr := range stored {
		data, err := json.Marshal(tr)
		if err != nil {
			t.Fatal(err)
		}
		fields := []string{string(data), tr.Response, string(tr.Parsed), tr.Error}
		for _, p := range tr.Prompt {
			fields = append(fields, p.Content)
		}
		for _, m := range markers {
			if strings.Contains(strings.Join(fields, "\n"), m) {
				t.Errorf("stored %s trace %s carries %q", tr.Stage, tr.ID, m)
			}
		}
		redacted += strings.Count(string(data), redact.Redacted)
	}
	if redacted < 8 {
		t.Errorf("only %d redactions in the stored traces", redacted)
	}
	if !strings.Contains(stored[0].Prompt[len(stored[0].Prompt)-1].Content, "Please use key "+redact.Redacted) {
		t.Errorf("stage1 prompt does not show the redacted user prompt")
	}
	for _, stage := range []string{"stage1", "stage2", "plan"} {
		status, data := env.call(t, "POST", "/admin/v1/workflows/"+id+"/render", adminRootToken, map[string]any{"stage": stage})
		for _, m := range markers {
			if status != 200 || strings.Contains(string(data), m) {
				t.Errorf("render %s: status %d, carries %q: %.200s", stage, status, m, data)
			}
		}
	}
	env.script.push(workflow.StageOne, generate(leak))
	status, data := env.call(t, "POST", "/admin/v1/traces/"+stored[0].ID+"/replay", adminRootToken, nil)
	for _, m := range markers {
		if status != 200 || strings.Contains(string(data), m) {
			t.Errorf("replay: status %d, carries %q", status, m)
		}
	}
}
