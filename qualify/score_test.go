package qualify_test

import (
	"context"
	"strings"
	"testing"

	"github.com/twostep/twostep/economy"
	"github.com/twostep/twostep/llm"
	"github.com/twostep/twostep/modes/react"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/qualify"
	"github.com/twostep/twostep/qualify/qualifytest"
	"github.com/twostep/twostep/templates"
	"github.com/twostep/twostep/workflow"
)

func newBuilder(t *testing.T) *prompts.Builder {
	t.Helper()
	set, err := templates.Load("")
	if err != nil {
		t.Fatal(err)
	}
	return prompts.NewBuilder(set, prompts.Options{})
}

func perfectStage1(c qualify.Prepared) string {
	text, _ := qualifytest.Reply(c, qualifytest.Perfect, 1)
	return text
}

// run runs s against a fake server answering with fault, through the real
// OpenAI-compatible adapter.
func run(t *testing.T, s qualify.Suite, fault qualifytest.Fault, opts qualify.Options) qualify.Report {
	t.Helper()
	fake := qualifytest.New(t, s, fault)
	m, err := llm.New(context.Background(), llm.Config{Provider: llm.ProviderOpenAI, OpenAIBaseURL: fake.URL, Model: "fake-model", MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	opts.Model, opts.Prompts = m, newBuilder(t)
	r, err := qualify.Run(context.Background(), s, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestScoring: a fake model answering every case with one chosen failure
// is counted in that failure's column, and in no other failure column; a
// perfect one scores 100 %.
func TestScoring(t *testing.T) {
	t.Parallel()
	s, err := qualify.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	n1, n2 := len(s.Stage(workflow.StageOne)), len(s.Stage(workflow.StageTwo))
	mutated := func(f qualifytest.Fault) int {
		n := 0
		for _, c := range s.Stage(workflow.StageTwo) {
			if _, _, ok := qualifytest.Mutation(c, f); ok {
				n++
			}
		}
		return n
	}
	wrong, invented := mutated(qualifytest.WrongValue), mutated(qualifytest.InventedValue)
	if wrong < n2/2 || invented < n2/2 {
		t.Fatalf("the value faults change too few cases (%d wrong, %d invented of %d): the test would prove little", wrong, invented, n2)
	}
	// want is the columns a fault must show; every column not named
	// must have its perfect value.
	type cols = map[string]int
	perfect1 := cols{"passed": n1, "calls": n1, "validFirstTry": n1, "validAfterFeedback": 0, "invalidJSON": 0, "truncated": 0,
		"parametersKey": 0, "forbidden": 0, "action": n1, "references": n1, "fields": n1, "carried": n1}
	perfect2 := cols{"passed": n2, "calls": n2, "validFirstTry": n2, "validAfterFeedback": 0, "invalidJSON": 0, "truncated": 0,
		"forbidden": 0, "schemaValid": n2, "values": n2, "ungroundedCases": 0}
	for _, tc := range []struct {
		fault      qualifytest.Fault
		s1, s2     cols
		skipStage2 bool
	}{
		{fault: qualifytest.Perfect},
		{fault: qualifytest.ParametersKey, skipStage2: true,
			s1: cols{"passed": 0, "calls": 3 * n1, "validFirstTry": 0, "parametersKey": 3 * n1}},
		{fault: qualifytest.ParametersOnce, skipStage2: true,
			s1: cols{"calls": 2 * n1, "validFirstTry": 0, "validAfterFeedback": n1, "parametersKey": n1}},
		{fault: qualifytest.Forbidden,
			s1: cols{"passed": 0, "calls": 3 * n1, "validFirstTry": 0, "forbidden": 3 * n1},
			s2: cols{"passed": 0, "calls": 3 * n2, "validFirstTry": 0, "forbidden": 3 * n2, "schemaValid": 0,
				"values": countValuesIgnoringExtra(s)}},
		{fault: qualifytest.WrongAction, skipStage2: true,
			s1: cols{"passed": 0, "action": 0, "references": -1, "fields": -1, "carried": -1}},
		{fault: qualifytest.WrongValue,
			s2: cols{"passed": n2 - wrong, "values": n2 - wrong}},
		{fault: qualifytest.InventedValue,
			s2: cols{"passed": n2 - invented, "values": n2 - invented, "ungroundedCases": invented}},
		{fault: qualifytest.InvalidJSON,
			s1: cols{"passed": 0, "calls": 3 * n1, "validFirstTry": 0, "invalidJSON": 3 * n1, "action": 0, "references": 0, "fields": 0, "carried": 0},
			s2: cols{"passed": 0, "calls": 3 * n2, "validFirstTry": 0, "invalidJSON": 3 * n2, "schemaValid": 0, "values": 0}},
		{fault: qualifytest.Truncated,
			s1: cols{"passed": 0, "calls": 3 * n1, "validFirstTry": 0, "truncated": 3 * n1, "action": 0, "references": 0, "fields": 0, "carried": 0},
			s2: cols{"passed": 0, "calls": 3 * n2, "validFirstTry": 0, "truncated": 3 * n2, "schemaValid": 0, "values": 0}},
	} {
		t.Run(tc.fault.String(), func(t *testing.T) {
			t.Parallel()
			r := run(t, s, tc.fault, qualify.Options{})
			check(t, "stage1", r.Stages[0], perfect1, tc.s1)
			if !tc.skipStage2 {
				check(t, "stage2", r.Stages[1], perfect2, tc.s2)
			}
		})
	}
}

// countValuesIgnoringExtra is how many Stage 2 cases still give their
// expected values when a forbidden key is added beside them: all.
func countValuesIgnoringExtra(s qualify.Suite) int { return len(s.Stage(workflow.StageTwo)) }

// check compares a stage's columns with base overridden by want (a
// negative want: any value).
func check(t *testing.T, stage string, got qualify.StageReport, base, want map[string]int) {
	t.Helper()
	have := map[string]int{"passed": got.Passed, "calls": got.Calls, "validFirstTry": got.ValidFirstTry,
		"validAfterFeedback": got.ValidAfterFeedback, "invalidJSON": got.InvalidJSON, "truncated": got.Truncated,
		"parametersKey": got.ParametersKey, "forbidden": got.Forbidden, "action": got.Action, "references": got.References,
		"fields": got.Fields, "carried": got.Carried, "schemaValid": got.SchemaValid, "values": got.Values,
		"ungroundedCases": got.UngroundedCases}
	for k, v := range base {
		if w, ok := want[k]; ok {
			v = w
		}
		if v >= 0 && have[k] != v {
			t.Errorf("%s %s = %d, want %d", stage, k, have[k], v)
		}
	}
	if got.NotRun+got.Stopped+got.Errors != 0 {
		t.Errorf("%s: %d not run, %d stopped, %d errors", stage, got.NotRun, got.Stopped, got.Errors)
	}
}

// TestPerfectScoresAll: a perfect model scores 1 in both stages, with
// the tokens, cost and models of its calls.
func TestPerfectScoresAll(t *testing.T) {
	t.Parallel()
	s, err := qualify.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	prices := economy.Prices{"openai/fake-model": {Input: 1, CachedInput: 0.1, Output: 2}}
	r := run(t, s, qualifytest.Perfect, qualify.Options{Prices: prices, Concurrency: 8})
	if r.Score() != 1 {
		t.Errorf("score %v, want 1", r.Score())
	}
	for _, st := range r.Stages {
		n := st.Calls
		u := qualifytest.Usage
		want := qualify.Tokens{Input: n * u.Prompt, Cached: n * u.Cached, Output: n * u.Completion}
		if st.Tokens != want {
			t.Errorf("%s tokens %+v, want %+v", st.Stage, st.Tokens, want)
		}
		usd := prices["openai/fake-model"].USD(economy.Tokens{Input: want.Input, Cached: want.Cached, Output: want.Output})
		if st.USD == nil || !near(*st.USD, usd) {
			t.Errorf("%s usd %v, want %v", st.Stage, st.USD, usd)
		}
		if len(st.Models) != 1 || st.Models[0] != "openai/fake-model" {
			t.Errorf("%s models %v", st.Stage, st.Models)
		}
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// TestMaxCalls: the run makes no more calls than --max-calls; the cases
// it could not finish do not pass.
func TestMaxCalls(t *testing.T) {
	t.Parallel()
	s, err := qualify.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	r := run(t, s, qualifytest.ParametersKey, qualify.Options{MaxCalls: 10, Stages: []workflow.Stage{workflow.StageOne}})
	st := r.Stages[0]
	if st.Calls != 10 || len(r.Stages) != 1 {
		t.Fatalf("calls %d (stages %d), want 10 in stage 1 only", st.Calls, len(r.Stages))
	}
	if st.NotRun+st.Stopped+3 < st.Cases || st.Passed != 0 || st.Score != 0 {
		t.Errorf("not run %d, stopped %d of %d cases; passed %d", st.NotRun, st.Stopped, st.Cases, st.Passed)
	}
}

// TestTextReport: the text report gives each stage's columns and says,
// per failed case, what went wrong.
func TestTextReport(t *testing.T) {
	t.Parallel()
	s, err := qualify.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	r := run(t, s, qualifytest.InventedValue, qualify.Options{Stages: []workflow.Stage{workflow.StageTwo}})
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, want := range []string{"Stage 2: 42 cases, openai/fake-model", "cases with ungrounded values",
		"failed:\n", `s2-id-tracking (ids): values differ: {"trackingNumber":"Zqxv Invented 48213"}; ungrounded: trackingNumber`,
		"passed by situation:"} {
		if !strings.Contains(text, want) {
			t.Errorf("the report lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "Stage 1") {
		t.Errorf("a stage not run is reported:\n%s", text)
	}
}

// TestNoCaseOfStage: a run of a stage the suite has no case of is refused
// before any call.
func TestNoCaseOfStage(t *testing.T) {
	t.Parallel()
	s, err := qualify.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	one := qualify.Suite{Cases: s.Stage(workflow.StageOne)[:1]}
	never := workflow.ModelFunc(func(context.Context, workflow.ModelRequest) (workflow.ModelResponse, error) {
		t.Error("a model call was made")
		return workflow.ModelResponse{}, nil
	})
	_, err = qualify.Run(context.Background(), one, qualify.Options{Stages: []workflow.Stage{workflow.StageTwo}, Model: never, Prompts: newBuilder(t)})
	if workflow.KindOf(err) != workflow.KindInvalid {
		t.Errorf("err %v, want KindInvalid", err)
	}
}

// TestDeadModelStops: a model that answers no call stops the run after a
// few calls instead of costing every case its retries; the report says
// so and names the error.
func TestDeadModelStops(t *testing.T) {
	t.Parallel()
	s, err := qualify.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	dead := workflow.ModelFunc(func(context.Context, workflow.ModelRequest) (workflow.ModelResponse, error) {
		calls++ // Concurrency 1: one call at a time
		return workflow.ModelResponse{}, workflow.Errorf(workflow.KindUnavailable, "401 invalid key")
	})
	r, err := qualify.Run(context.Background(), s, qualify.Options{Model: dead, Prompts: newBuilder(t), Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 3 {
		t.Errorf("%d calls, want 3", calls)
	}
	if got := r.Unanswered(); got != "401 invalid key" {
		t.Errorf("Unanswered() = %q", got)
	}
	errs, notRun, cases := 0, 0, 0
	for _, st := range r.Stages {
		errs, notRun, cases = errs+st.Errors, notRun+st.NotRun, cases+st.Cases
		if st.Passed != 0 {
			t.Errorf("%s: %d passed", st.Stage, st.Passed)
		}
	}
	if errs != 3 || notRun != cases-3 {
		t.Errorf("errors %d, not run %d of %d", errs, notRun, cases)
	}
}

// TestRequireGrounded: with stage2.requireGrounded all, a reply with an
// invented value is rejected and asked again, as in a round; the cases
// whose every reply invents one are never accepted.
func TestRequireGrounded(t *testing.T) {
	t.Parallel()
	s, err := qualify.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	n2, invented := len(s.Stage(workflow.StageTwo)), 0
	for _, c := range s.Stage(workflow.StageTwo) {
		if _, _, ok := qualifytest.Mutation(c, qualifytest.InventedValue); ok {
			invented++
		}
	}
	r := run(t, s, qualifytest.InventedValue, qualify.Options{RequireGrounded: react.GroundedAll, Stages: []workflow.Stage{workflow.StageTwo}})
	st := r.Stages[0]
	if st.ValidFirstTry != n2-invented || st.ValidAfterFeedback != 0 || st.Calls != n2+2*invented || st.Passed != n2-invented {
		t.Errorf("first try %d, after feedback %d, calls %d, passed %d; want %d, 0, %d, %d",
			st.ValidFirstTry, st.ValidAfterFeedback, st.Calls, st.Passed, n2-invented, n2+2*invented, n2-invented)
	}
}
