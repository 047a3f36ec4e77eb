package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/twostep/twostep/adminv1"
	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/templates"
	"github.com/twostep/twostep/workflow"
)

// adminFixture is a test server whose admin routes read a memstore seeded
// directly, with the fake registry and a model that must not be called
// unless a test scripts it.
type adminFixture struct {
	env     *testEnv
	store   workflow.Store
	builder *prompts.Builder
	reg     *enginetest.Registry
	model   *scripted.Model
}

func newAdminFixture(t *testing.T, store workflow.Store, opts ...func(*AdminOptions)) *adminFixture {
	t.Helper()
	set, err := templates.Load("")
	if err != nil {
		t.Fatal(err)
	}
	f := &adminFixture{store: store, builder: prompts.NewBuilder(set, prompts.Options{}), reg: enginetest.NewRegistry(),
		model: scripted.New()}
	o := AdminOptions{Reads: engine.NewReader(store).Admin(), Model: f.model, Registry: f.reg, Prompts: f.builder}
	for _, opt := range opts {
		opt(&o)
	}
	admin, err := NewAdmin(o)
	if err != nil {
		t.Fatal(err)
	}
	f.env = newTestEnv(t, func(o *Options) { o.Admin = admin.Register })
	return f
}

// seed commits a workflow of user created at the given minute with a user
// message, and returns it.
func seed(t testing.TB, s workflow.Store, user string, minute int, cp *workflow.Checkpoint) *workflow.Workflow {
	t.Helper()
	at := time.Date(2026, 11, 22, 12, minute, 0, 0, time.UTC)
	wf := &workflow.Workflow{
		ID: workflow.NewID(workflow.PrefixWorkflow), UserID: user, Mode: workflow.ModeReact, Status: workflow.StatusStopped,
		StopReason: workflow.StopStopped, Round: 1, Step: 1, MaxSteps: 5, CreatedAt: at, UpdatedAt: at, Checkpoint: cp,
	}
	msg := workflow.Message{ID: workflow.NewID(workflow.PrefixMessage), Round: 1, Role: workflow.RoleUser,
		Text: "prompt of " + user, CreatedAt: at}
	stored, _, err := s.Commit(context.Background(), workflow.Commit{Workflow: wf, Messages: []workflow.Message{msg}})
	if err != nil {
		t.Fatal(err)
	}
	return stored
}

func TestNewAdminReportsEveryMissingDependency(t *testing.T) {
	t.Parallel()
	_, err := NewAdmin(AdminOptions{})
	if workflow.KindOf(err) != workflow.KindInvalid {
		t.Fatalf("kind %v, want invalid", workflow.KindOf(err))
	}
	for _, want := range []string{"Reads", "Model", "Registry", "Prompts"} {
		if !strings.Contains(err.Error(), want+" is required") {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}

func TestAdminListWorkflows(t *testing.T) {
	t.Parallel()
	store := memstore.New()
	f := newAdminFixture(t, store)
	a1 := seed(t, store, "alice", 1, nil)
	b2 := seed(t, store, "bob", 2, nil)
	a3 := seed(t, store, "alice", 3, nil)
	c4 := seed(t, store, "carol", 4, nil) // carol is in no token list
	list := func(t *testing.T, path string) ([]string, string) {
		t.Helper()
		rec := f.env.do(t, "GET", path, adminToken, nil)
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
		}
		var l adminv1.AdminWorkflowList
		if err := json.Unmarshal(rec.Body.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, w := range l.Workflows {
			out = append(out, w.ID)
		}
		return out, l.NextCursor
	}
	tests := []struct {
		name, path string
		want       []string
		cursor     bool
	}{
		{"every user, newest first, also one in no token list", "/admin/v1/workflows", []string{c4.ID, a3.ID, b2.ID, a1.ID}, false},
		{"limit across users", "/admin/v1/workflows?limit=2", []string{c4.ID, a3.ID}, true},
		{"one user, paged", "/admin/v1/workflows?userId=alice&limit=1", []string{a3.ID}, true},
		{"a user in no token list by id", "/admin/v1/workflows?userId=carol", []string{c4.ID}, false},
		{"a user with no workflows", "/admin/v1/workflows?userId=nobody", nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, next := list(t, tc.path)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
			if (next != "") != tc.cursor {
				t.Errorf("nextCursor %q, want one: %v", next, tc.cursor)
			}
		})
	}
	pages := []struct {
		name, path string
		want       [][]string
	}{
		{"every user", "/admin/v1/workflows?limit=3", [][]string{{c4.ID, a3.ID, b2.ID}, {a1.ID}}},
		{"every user, one at a time", "/admin/v1/workflows?limit=1", [][]string{{c4.ID}, {a3.ID}, {b2.ID}, {a1.ID}}},
		{"one user", "/admin/v1/workflows?userId=alice&limit=1", [][]string{{a3.ID}, {a1.ID}}},
	}
	for _, tc := range pages {
		t.Run("paging "+tc.name, func(t *testing.T) {
			var got [][]string
			path := tc.path
			for range len(tc.want) + 1 {
				ids, next := list(t, path)
				got = append(got, ids)
				if next == "" {
					break
				}
				path = tc.path + "&cursor=" + next
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("pages (-want +got):\n%s", diff)
			}
		})
	}
	for _, path := range []string{"/admin/v1/workflows?cursor=abc", "/admin/v1/workflows?userId=alice&cursor=abc"} {
		rec := f.env.do(t, "GET", path, adminToken, nil)
		if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "cursor") {
			t.Errorf("GET %s: %d %s, want 422 about the cursor", path, rec.Code, rec.Body)
		}
	}
}

// TestAdminListFiltersByStatusAndText: status and q keep only the matching
// workflows (q against title, id, user and error, ignoring case), and
// paging a filtered listing neither repeats nor skips a match.
func TestAdminListFiltersByStatusAndText(t *testing.T) {
	t.Parallel()
	store := memstore.New()
	f := newAdminFixture(t, store)
	var failed, quarterly []string
	for i := range 12 {
		at := time.Date(2026, 11, 22, 12, i, 0, 0, time.UTC)
		wf := &workflow.Workflow{ID: workflow.NewID(workflow.PrefixWorkflow), UserID: fmt.Sprintf("u%d", i%3), Mode: workflow.ModeReact,
			Status: workflow.StatusCompleted, StopReason: workflow.StopCompleted, Round: 1, MaxSteps: 5,
			Title: fmt.Sprintf("Weekly report %d", i), CreatedAt: at, UpdatedAt: at}
		if i%4 == 1 {
			wf.Status, wf.StopReason, wf.Error = workflow.StatusFailed, workflow.StopFailures, "3 steps failed in a row"
			failed = append([]string{wf.ID}, failed...)
		}
		if i%5 == 0 {
			wf.Title = "Summarise the QUARTERLY numbers"
			quarterly = append([]string{wf.ID}, quarterly...)
		}
		if _, _, err := store.Commit(context.Background(), workflow.Commit{Workflow: wf}); err != nil {
			t.Fatal(err)
		}
	}
	all := func(query string) []string {
		t.Helper()
		var ids []string
		cursor := ""
		for range 20 {
			rec := f.env.do(t, "GET", "/admin/v1/workflows?limit=2&"+query+"&cursor="+cursor, adminToken, nil)
			if rec.Code != http.StatusOK {
				t.Fatalf("%s: %d %s", query, rec.Code, rec.Body)
			}
			var l adminv1.AdminWorkflowList
			if err := json.Unmarshal(rec.Body.Bytes(), &l); err != nil {
				t.Fatal(err)
			}
			for _, w := range l.Workflows {
				ids = append(ids, w.ID)
			}
			if cursor = l.NextCursor; cursor == "" {
				break
			}
		}
		return ids
	}
	if diff := cmp.Diff(failed, all("status=failed")); diff != "" {
		t.Errorf("status=failed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(quarterly, all("q=quarterly")); diff != "" {
		t.Errorf("q=quarterly (-want +got):\n%s", diff)
	}
	if got := all("q=in+a+row&status=failed"); len(got) != len(failed) {
		t.Errorf("q on the error text found %d, want %d", len(got), len(failed))
	}
	if got := all("status=running"); len(got) != 0 {
		t.Errorf("status=running found %v, want none", got)
	}
	if rec := f.env.do(t, "GET", "/admin/v1/workflows?status=bogus", adminToken, nil); rec.Code != http.StatusUnprocessableEntity {
		t.Errorf("status=bogus: %d, want 422", rec.Code)
	}
}

// failingStore fails listings with an internal error.
type failingStore struct{ workflow.Store }

func (failingStore) ListWorkflows(context.Context, string, workflow.Page) ([]*workflow.Workflow, string, error) {
	return nil, "", errors.New("redis: connection pool exhausted at 10.0.0.7")
}

func (failingStore) ListAll(context.Context, workflow.Page) ([]*workflow.Workflow, string, error) {
	return nil, "", errors.New("redis: connection pool exhausted at 10.0.0.7")
}

func TestAdminErrors(t *testing.T) {
	t.Parallel()
	f := newAdminFixture(t, failingStore{memstore.New()})
	tests := []struct {
		name, method, path string
		body               any
		status             int
		detail             string
	}{
		{"store failure is a generic 500", "GET", "/admin/v1/workflows", nil, 500, "internal error"},
		{"one user's store failure is a generic 500", "GET", "/admin/v1/workflows?userId=alice", nil, 500, "internal error"},
		{"malformed workflow id", "GET", "/admin/v1/workflows/nope", nil, 404, "not found"},
		{"unknown workflow", "GET", "/admin/v1/workflows/wf_01ARZ3NDEKTSV4RRFFQ69G5FAV/traces", nil, 404, "not found"},
		{"malformed trace id", "GET", "/admin/v1/traces/../x", nil, 404, ""},
		{"unknown trace", "POST", "/admin/v1/traces/tr_01ARZ3NDEKTSV4RRFFQ69G5FAV/replay", nil, 404, "not found"},
		{"render without stage", "POST", "/admin/v1/workflows/wf_01ARZ3NDEKTSV4RRFFQ69G5FAV/render", map[string]any{}, 422, "stage"},
		{"replay with an empty message", "POST", "/admin/v1/traces/tr_01ARZ3NDEKTSV4RRFFQ69G5FAV/replay",
			map[string]any{"prompt": []map[string]string{{"role": "user", "content": ""}}}, 422, "content"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := f.env.do(t, tc.method, tc.path, adminToken, tc.body)
			if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.detail) {
				t.Errorf("%d %s; want %d mentioning %q", rec.Code, rec.Body, tc.status, tc.detail)
			}
			if strings.Contains(rec.Body.String(), "10.0.0.7") {
				t.Errorf("internal detail leaked: %s", rec.Body)
			}
		})
	}
}

// TestAdminRenderFromState renders each stage from seeded state and checks
// it against the builder called as the react mode calls it.
func TestAdminRenderFromState(t *testing.T) {
	t.Parallel()
	store := memstore.New()
	f := newAdminFixture(t, store)
	sel := workflow.Selection{Action: enginetest.Echo, ActionObjective: "echo it", ParametersContext: "say hi",
		ParametersSchema: workflow.ParametersSchema{Fields: []workflow.FieldSpec{{Name: "text", Type: "string", Required: true}}}}
	atSelect := seed(t, store, "alice", 1, &workflow.Checkpoint{Phase: workflow.PhaseSelect})
	atParams := seed(t, store, "alice", 2, &workflow.Checkpoint{Phase: workflow.PhaseParameterize, Selection: &sel})
	msgs, _ := store.Messages(context.Background(), atSelect.ID, 0, 0)
	want1, err := f.builder.Stage1(prompts.Stage1Input{Workflow: atSelect, Messages: msgs, Actions: f.reg.Actions(),
		Connections: f.reg.Connections("alice")})
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := f.reg.Action(enginetest.Echo)
	want2, err := f.builder.Stage2(prompts.Stage2Input{Selection: sel, Action: spec})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		id   string
		body map[string]any
		want []workflow.PromptMessage
	}{
		{"stage1", atSelect.ID, map[string]any{"stage": "stage1"}, want1.Messages},
		{"stage2 from the checkpoint", atParams.ID, map[string]any{"stage": "stage2"}, want2.Messages},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := f.env.do(t, "POST", "/admin/v1/workflows/"+tc.id+"/render", adminToken, tc.body)
			var got adminv1.RenderResult
			if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &got) != nil {
				t.Fatalf("%d %s", rec.Code, rec.Body)
			}
			if diff := cmp.Diff(wireOf[[]adminv1.PromptMessage](tc.want), got.Prompt); diff != "" {
				t.Errorf("prompt (-builder +render):\n%s", diff)
			}
		})
	}
	t.Run("feedback renders the retry", func(t *testing.T) {
		rec := f.env.do(t, "POST", "/admin/v1/workflows/"+atSelect.ID+"/render", adminToken,
			map[string]any{"stage": "stage1", "feedback": []string{"action is missing"}})
		var got adminv1.RenderResult
		_ = json.Unmarshal(rec.Body.Bytes(), &got)
		if got.Placeholders["VALIDATION_FEEDBACK"] != prompts.Feedback([]string{"action is missing"}) {
			t.Errorf("VALIDATION_FEEDBACK = %q", got.Placeholders["VALIDATION_FEEDBACK"])
		}
	})
	t.Run("stage2 from the last action message when no trace is kept", func(t *testing.T) {
		wf := seed(t, store, "alice", 5, nil)
		act := workflow.Message{ID: workflow.NewID(workflow.PrefixMessage), Round: 1, Step: 1, Role: workflow.RoleAction,
			Action: enginetest.Echo, ActionObjective: "echo again", Status: workflow.MessageSuccess, Learnings: []string{"l1"}}
		next := wf.Clone()
		if _, _, err := store.Commit(context.Background(), workflow.Commit{Workflow: next, ExpectedVersion: wf.Version,
			Messages: []workflow.Message{act}}); err != nil {
			t.Fatal(err)
		}
		rec := f.env.do(t, "POST", "/admin/v1/workflows/"+wf.ID+"/render", adminToken, map[string]any{"stage": "stage2"})
		var got adminv1.RenderResult
		if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &got) != nil {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		if !strings.HasPrefix(got.Source, "message "+act.ID) || !strings.Contains(got.Source, "partial") ||
			got.Placeholders["ACTION_OBJECTIVE"] != "echo again" {
			t.Errorf("source %q, ACTION_OBJECTIVE %q", got.Source, got.Placeholders["ACTION_OBJECTIVE"])
		}
	})
	if n := len(f.model.Calls()); n != 0 {
		t.Errorf("render called the model %d times", n)
	}
}

// TestAdminPage: the viewer's files load without a token, with a strict
// CSP; anything else under /admin still needs an admin token, and the page
// stays out of the OpenAPI document.
func TestAdminPage(t *testing.T) {
	t.Parallel()
	f := newAdminFixture(t, memstore.New())
	tests := []struct {
		method, path string
		status       int
		ctype        string
	}{
		{"GET", "/admin/", 200, "text/html; charset=utf-8"},
		{"GET", "/admin/app.js", 200, "text/javascript; charset=utf-8"},
		{"GET", "/admin/app.css", 200, "text/css; charset=utf-8"},
		{"GET", "/admin", 301, ""},
		{"POST", "/admin/", 401, ""},
		{"GET", "/admin/other.js", 401, ""},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			rec := f.env.do(t, tc.method, tc.path, "", nil)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			if tc.ctype != "" {
				if got := rec.Header().Get("Content-Type"); got != tc.ctype {
					t.Errorf("Content-Type %q, want %q", got, tc.ctype)
				}
				if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
					t.Errorf("CSP %q", csp)
				}
			}
		})
	}
	js := f.env.do(t, "GET", "/admin/app.js", "", nil).Body.String()
	for _, banned := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("} {
		if strings.Contains(js, banned) {
			t.Errorf("app.js uses %s", banned)
		}
	}
	spec := f.env.do(t, "GET", "/openapi.json", "", nil).Body.String()
	if !strings.Contains(spec, "/admin/v1/workflows/{id}/render") || strings.Contains(spec, `"/admin/"`) {
		t.Errorf("OpenAPI should list the admin API but not the page")
	}
}

// TestAdminReplayActionTraces: an action's own model call (ai.process) is
// replayable like a stage call; an action's execution record has no prompt
// and answers 422.
func TestAdminReplayActionTraces(t *testing.T) {
	t.Parallel()
	store := memstore.New()
	f := newAdminFixture(t, store)
	f.model = scripted.New("a fresh summary")
	admin, err := NewAdmin(AdminOptions{Reads: engine.NewReader(store).Admin(), Model: f.model, Registry: f.reg, Prompts: f.builder})
	if err != nil {
		t.Fatal(err)
	}
	f.env = newTestEnv(t, func(o *Options) { o.Admin = admin.Register })
	wf := seed(t, store, "alice", 1, nil)
	call := workflow.Trace{ID: workflow.NewID(workflow.PrefixTrace), WorkflowID: wf.ID, Round: 1, Step: 1,
		Stage: workflow.StageAction, Attempt: 1, Template: "ai.process",
		Prompt: []workflow.PromptMessage{{Role: "user", Content: "summarise the notes"}}, Response: "old summary"}
	exec := workflow.Trace{ID: workflow.NewID(workflow.PrefixTrace), WorkflowID: wf.ID, Round: 1, Step: 1,
		Stage: workflow.StageAction, Attempt: 1, Template: "ai.process", Response: "result"}
	for _, tr := range []workflow.Trace{call, exec} {
		if err := store.AppendTrace(context.Background(), tr); err != nil {
			t.Fatal(err)
		}
	}
	rec := f.env.do(t, "POST", "/admin/v1/traces/"+call.ID+"/replay", adminToken, map[string]any{})
	if rec.Code != http.StatusOK {
		t.Fatalf("replay of the model call: %d %s", rec.Code, rec.Body)
	}
	var got adminv1.ReplayResult
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Response != "a fresh summary" || got.Error != "" {
		t.Errorf("replay = %+v, want the model's new answer and no error", got)
	}
	if calls := f.model.Calls(); len(calls) != 1 || !strings.Contains(calls[0].Text(), "summarise the notes") {
		t.Errorf("model calls = %+v, want the recorded prompt once", calls)
	}
	rec = f.env.do(t, "POST", "/admin/v1/traces/"+exec.ID+"/replay", adminToken, map[string]any{})
	if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "no prompt to replay") {
		t.Errorf("replay of the execution record: %d %s, want 422", rec.Code, rec.Body)
	}
	if n := len(f.model.Calls()); n != 1 {
		t.Errorf("the execution record reached the model: %d calls", n)
	}
}

// TestAdminReplayNativeStage2: a Stage 2 replay sends the step's output
// schema, and a native reply's strict-mode null for an optional field is
// dropped before the unchanged validation, as in a round.
func TestAdminReplayNativeStage2(t *testing.T) {
	t.Parallel()
	store := memstore.New()
	f := newAdminFixture(t, store)
	var sent *workflow.OutputSchema
	model := workflow.ModelFunc(func(_ context.Context, req workflow.ModelRequest) (workflow.ModelResponse, error) {
		sent = req.Output
		return workflow.ModelResponse{Text: `{"schema":"parameters_v1","parameters":{"text":"hi","message":null}}`,
			Model: "fake/native", OutputMode: workflow.OutputTool, PromptTokens: 1}, nil
	})
	admin, err := NewAdmin(AdminOptions{Reads: engine.NewReader(store).Admin(), Model: model, Registry: f.reg, Prompts: f.builder})
	if err != nil {
		t.Fatal(err)
	}
	f.env = newTestEnv(t, func(o *Options) { o.Admin = admin.Register })
	sel := workflow.Selection{Action: enginetest.Echo, ActionObjective: "echo", ParametersSchema: workflow.ParametersSchema{Fields: []workflow.FieldSpec{
		{Name: "text", Type: "string", Required: true}, {Name: "message", Type: "string"}}}}
	wf := seed(t, store, "alice", 1, &workflow.Checkpoint{Phase: workflow.PhaseParameterize, Selection: &sel})
	tr := workflow.Trace{ID: workflow.NewID(workflow.PrefixTrace), WorkflowID: wf.ID, Round: 1, Step: 1, Stage: workflow.StageTwo,
		Attempt: 1, Template: "stage2", Prompt: []workflow.PromptMessage{{Role: "user", Content: "fill"}}, Response: "{}"}
	if err := store.AppendTrace(context.Background(), tr); err != nil {
		t.Fatal(err)
	}
	rec := f.env.do(t, "POST", "/admin/v1/traces/"+tr.ID+"/replay", adminToken, map[string]any{})
	var got adminv1.ReplayResult
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("replay: %d %s", rec.Code, rec.Body)
	}
	if sent == nil || sent.Name != prompts.Stage2SchemaName || !sent.Strict {
		t.Errorf("replay sent %+v, want the strict Stage 2 schema", sent)
	}
	if got.Error != "" || got.OutputMode != "tool" || strings.Contains(string(got.Parsed), "message") ||
		!strings.Contains(got.Response, `"message":null`) {
		t.Errorf("replay = %+v, want accepted in tool mode, the null dropped from parsed but kept in the response", got)
	}
}
