package httpapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/twostep/twostep/adminv1"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/experiments"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/workflow"
)

// recordedTraces seeds a workflow with an accepted Stage 1 call (inputs
// kept), a rejected one, and an accepted Stage 2 call recorded before
// traces kept inputs.
func recordedTraces(t *testing.T, store workflow.Store) (*workflow.Workflow, []workflow.Trace) {
	t.Helper()
	wf := seed(t, store, "alice", 1, nil)
	at := time.Date(2026, 11, 22, 12, 1, 0, 0, time.UTC)
	sel := enginetest.Select(enginetest.Echo, "echo hi", nil, "", "text")
	traces := []workflow.Trace{
		{ID: workflow.NewID(workflow.PrefixTrace), WorkflowID: wf.ID, Round: 1, Step: 1, Stage: workflow.StageOne, Attempt: 1,
			Template: "stage1", Prompt: []workflow.PromptMessage{{Role: "user", Content: "bad"}}, Response: "nonsense",
			Error: "no JSON object", Model: "scripted/m", CreatedAt: at},
		{ID: workflow.NewID(workflow.PrefixTrace), WorkflowID: wf.ID, Round: 1, Step: 1, Stage: workflow.StageOne, Attempt: 2,
			Template: "stage1", Inputs: map[string]string{"USER_PROMPT": "echo hi"},
			Prompt: []workflow.PromptMessage{{Role: "user", Content: "echo hi"}}, Response: sel, Parsed: json.RawMessage(sel),
			Model: "scripted/m", CreatedAt: at},
		{ID: workflow.NewID(workflow.PrefixTrace), WorkflowID: wf.ID, Round: 1, Step: 1, Stage: workflow.StageTwo, Attempt: 1,
			Template: "stage2", Prompt: []workflow.PromptMessage{{Role: "user", Content: "fill"}},
			Response: enginetest.Params(map[string]any{"text": "hi"}), Parsed: json.RawMessage(`{"text":"hi"}`),
			Model: "scripted/m", CreatedAt: at},
	}
	for _, tr := range traces {
		if err := store.AppendTrace(context.Background(), tr); err != nil {
			t.Fatal(err)
		}
	}
	return wf, traces
}

// The dataset has one line per accepted call of the stage, never a
// rejected attempt; inputs are null on a trace recorded without them.
func TestAdminDataset(t *testing.T) {
	t.Parallel()
	store := memstore.New()
	f := newAdminFixture(t, store)
	wf, traces := recordedTraces(t, store)
	lines := func(query string) []experiments.Line {
		t.Helper()
		rec := f.env.do(t, "GET", "/admin/v1/datasets?"+query, adminToken, nil)
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/jsonl" {
			t.Fatalf("dataset %s: %d %q %s", query, rec.Code, rec.Header().Get("Content-Type"), rec.Body)
		}
		var out []experiments.Line
		sc := bufio.NewScanner(bytes.NewReader(rec.Body.Bytes()))
		for sc.Scan() {
			var l experiments.Line
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				t.Fatalf("line %q: %v", sc.Text(), err)
			}
			out = append(out, l)
		}
		return out
	}
	one := lines("stage=stage1")
	if len(one) != 1 || one[0].TraceID != traces[1].ID || one[0].WorkflowID != wf.ID || one[0].Inputs["USER_PROMPT"] != "echo hi" ||
		!strings.Contains(string(one[0].Output), `"action":"test.echo"`) || one[0].Prompt[0].Content != "echo hi" || one[0].Model != "scripted/m" {
		t.Errorf("stage1 dataset = %+v, want the accepted attempt only", one)
	}
	two := lines("stage=stage2")
	if len(two) != 1 || two[0].Inputs != nil || string(two[0].Output) != `{"text":"hi"}` {
		t.Errorf("stage2 dataset = %+v", two)
	}
	rec := f.env.do(t, "GET", "/admin/v1/datasets?stage=stage2", adminToken, nil)
	if !strings.Contains(rec.Body.String(), `"inputs":null`) {
		t.Errorf("a trace without inputs does not say so: %s", rec.Body)
	}
	if got := lines("stage=stage1&since=" + url.QueryEscape("2026-11-22T12:02:00Z")); len(got) != 0 {
		t.Errorf("since after every call: %d lines", len(got))
	}
	for _, q := range []string{"stage=plan", "", "stage=stage1&since=yesterday"} {
		if rec := f.env.do(t, "GET", "/admin/v1/datasets?"+q, adminToken, nil); rec.Code != http.StatusUnprocessableEntity {
			t.Errorf("dataset?%s: %d, want 422", q, rec.Code)
		}
	}
}

// Starting an experiment checks its override (422) and workflows (404);
// one started runs to completed and is read back; stop of an unknown one
// is 404.
func TestAdminExperimentRoutes(t *testing.T) {
	t.Parallel()
	store := memstore.New()
	model := scripted.New(enginetest.Select(enginetest.Echo, "echo hi", nil, "", "text"))
	var runner *experiments.Runner
	f := newAdminFixture(t, store, func(o *AdminOptions) {
		var err error
		runner, err = experiments.New(experiments.Options{Store: store, Reads: o.Reads, Registry: o.Registry, Prompts: o.Prompts,
			Model: model, Owner: "test"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(runner.Close)
		o.Experiments = runner
	})
	wf, _ := recordedTraces(t, store)
	for name, c := range map[string]struct {
		body   map[string]any
		status int
	}{
		"bad template":     {map[string]any{"stage": "stage1", "override": map[string]any{"templates": map[string]any{"stage1": "--- user ---\n{{KEY:NOPE}}\n"}}}, 422},
		"other template":   {map[string]any{"stage": "stage1", "override": map[string]any{"templates": map[string]any{"stage2": "x"}}}, 422},
		"no model builder": {map[string]any{"stage": "stage1", "override": map[string]any{"model": map[string]any{"provider": "openai", "model": "x"}}}, 422},
		"bad stage":        {map[string]any{"stage": "plan"}, 422},
		"both selections":  {map[string]any{"stage": "stage1", "workflows": []string{wf.ID}, "filter": map[string]any{"action": "x"}}, 422},
		"unknown workflow": {map[string]any{"stage": "stage1", "workflows": []string{"wf_nope"}}, 404},
		"started":          {map[string]any{"stage": "stage1", "workflows": []string{wf.ID}}, 202},
	} {
		rec := f.env.do(t, "POST", "/admin/v1/experiments", adminToken, c.body)
		if rec.Code != c.status {
			t.Errorf("%s: %d %s, want %d", name, rec.Code, rec.Body, c.status)
			continue
		}
		if name == "bad template" && !strings.Contains(rec.Body.String(), "NOPE") {
			t.Errorf("a bad template's problem does not say what is wrong: %s", rec.Body)
		}
		if c.status != http.StatusAccepted {
			continue
		}
		var id adminv1.ExperimentID
		if err := json.Unmarshal(rec.Body.Bytes(), &id); err != nil || !strings.HasPrefix(id.ID, experiments.PrefixExperiment) {
			t.Fatalf("started: %s (%v)", rec.Body, err)
		}
		var e experiments.Experiment
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			rec = f.env.do(t, "GET", "/admin/v1/experiments/"+id.ID, adminToken, nil)
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || rec.Code != http.StatusOK {
				t.Fatalf("get: %d %s", rec.Code, rec.Body)
			}
			if e.Status != experiments.StatusRunning || time.Now().After(deadline) {
				break
			}
		}
		if e.Status != experiments.StatusCompleted || e.Totals.Calls != 1 || e.Totals.Agreed != 1 {
			t.Errorf("experiment %+v, want completed with its one call agreeing", e)
		}
	}
	if rec := f.env.do(t, "POST", "/admin/v1/experiments/ex_nope/stop", adminToken, nil); rec.Code != http.StatusNotFound {
		t.Errorf("stop of an unknown experiment: %d %s", rec.Code, rec.Body)
	}
	if rec := f.env.do(t, "GET", "/admin/v1/experiments/ex_nope", "tok-alice-0123456789", nil); rec.Code != http.StatusForbidden && rec.Code != http.StatusUnauthorized {
		t.Errorf("a user read an experiment: %d", rec.Code)
	}
}
