package notices

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestGolden renders every notice and compares it with its golden file
// (go test -update rewrites them): the texts the model and the user read.
func TestGolden(t *testing.T) {
	t.Parallel()
	// The steps of the closing messages' goldens (written from the Go
	// code these templates replaced): a summary with characters an HTML
	// template would escape, a step with two documents, one that failed.
	done := []Done{
		{Step: 1, Action: "crm.lookup", Status: "success", Summary: `found 3 customers <Acme & "Co">`,
			Documents: []Doc{{ID: "doc_1", Name: "customers.json"}, {ID: "doc_2", Name: "notes.md"}}},
		{Step: 2, Action: "", Status: "success", Summary: "no action taken"},
		{Step: 3, Action: "http.request", Status: "error", Summary: "timeout after 30s"},
	}
	maxStepsDone := append([]Done(nil), done...)
	maxStepsDone[1].Action = "no action"
	allOK := append([]Done(nil), done...)
	allOK[2].Status = "success"
	cases := []struct {
		golden string
		got    string
	}{
		{"loop_warning_one", LoopWarning(Repeat{Step: 3, Action: "crm.lookup", Earlier: []int{2}}, "workflow.complete")},
		{"loop_warning_many", LoopWarning(Repeat{Step: 5, Action: "crm.lookup", Earlier: []int{2, 3, 4}}, "workflow.complete")},
		{"loop_end_two", LoopEnd(Repeat{Step: 4, Action: "http.request", Earlier: []int{2, 3}})},
		{"loop_end_one", LoopEnd(Repeat{Step: 2, Action: "http.request", Earlier: []int{1}})},
		{"truncated", Truncated("length", 300)},
		{"feedback", Feedback([]string{`"action" is missing`, "two\nlines", `"x": <not escaped> & "quoted"`})},
		{"more_problems_one", MoreProblems(1)},
		{"more_problems_many", MoreProblems(7)},
		{"done_list", render("done_list", done)}, // the list MaxSteps and PlanDone include
		{"max_steps_done", MaxSteps(3, maxStepsDone)},
		{"max_steps_none", MaxSteps(1, nil)},
		{"plan_done_failed", PlanDone(done, 1)},
		{"plan_done_ok", PlanDone(allOK, 0)},
		{"plan_done_one", PlanDone(done[:1], 0)},
		{"plan_done_none", PlanDone(nil, 0)},
		{"plan_unavailable_reply", PlanUnavailable("the reply was not valid JSON", `Sure! Here is the "plan": [1, 2`)},
		{"plan_unavailable_empty", PlanUnavailable("the reply was empty", "")},
		{"interrupted", Interrupted(4, 7)},
		{"budget_stop", BudgetStop("the daily token budget of user u_1 is spent (120000 of 100000 tokens); it resets at 2026-05-02T00:00:00Z")},
	}
	covered := map[string]bool{}
	for _, tc := range cases {
		for _, tmpl := range set.Templates() {
			name := strings.TrimSuffix(tmpl.Name(), ".tmpl")
			if tc.golden == name || strings.HasPrefix(tc.golden, name+"_") {
				covered[tmpl.Name()] = true
			}
		}
		t.Run(tc.golden, func(t *testing.T) {
			path := filepath.Join("testdata", tc.golden+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(tc.got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("read the golden file (go test -update writes it): %v", err)
			}
			if tc.got != string(want) {
				t.Errorf("rendered:\n%s\nwant (%s):\n%s", tc.got, path, want)
			}
		})
	}
	for _, tmpl := range set.Templates() {
		if strings.HasSuffix(tmpl.Name(), ".tmpl") && !covered[tmpl.Name()] {
			t.Errorf("%s has no golden case", tmpl.Name())
		}
	}
}

// TestFeedbackNone: no problem, no section (the template's line is then
// removed from the prompt).
func TestFeedbackNone(t *testing.T) {
	t.Parallel()
	if got := Feedback(nil); got != "" {
		t.Errorf("Feedback(nil) = %q, want \"\"", got)
	}
}

func TestCount(t *testing.T) {
	t.Parallel()
	tests := []struct {
		n                      int
		singular, plural, want string
	}{
		{0, "step", "", "0 steps"},
		{1, "step", "", "1 step"},
		{2, "step", "", "2 steps"},
		{1, "entry", "entries", "1 entry"},
		{3, "entry", "entries", "3 entries"},
		{-1, "step", "", "-1 steps"},
	}
	for _, tt := range tests {
		if got := Count(tt.n, tt.singular, tt.plural); got != tt.want {
			t.Errorf("Count(%d, %q, %q) = %q, want %q", tt.n, tt.singular, tt.plural, got, tt.want)
		}
	}
}

func TestJoinSteps(t *testing.T) {
	t.Parallel()
	tests := []struct {
		steps []int
		want  string
	}{
		{nil, ""},
		{[]int{2}, "2"},
		{[]int{2, 3}, "2 and 3"},
		{[]int{2, 3, 4}, "2, 3 and 4"},
	}
	for _, tt := range tests {
		if got := joinSteps(tt.steps); got != tt.want {
			t.Errorf("joinSteps(%v) = %q, want %q", tt.steps, got, tt.want)
		}
	}
}
