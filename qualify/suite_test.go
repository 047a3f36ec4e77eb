package qualify_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/qualify"
	"github.com/twostep/twostep/workflow"
)

// TestBuiltinSuiteLoads: the embedded suite loads, holds at least 40
// cases of each stage, and covers every situation the contract names.
func TestBuiltinSuiteLoads(t *testing.T) {
	t.Parallel()
	s, err := qualify.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []workflow.Stage{workflow.StageOne, workflow.StageTwo} {
		if n := len(s.Stage(st)); n < 40 {
			t.Errorf("%s has %d cases, want at least 40", st, n)
		}
	}
	situations := map[string]bool{}
	for _, c := range s.Cases {
		situations[string(c.Stage)+": "+c.Situation] = true
	}
	for _, want := range []string{
		"stage1: similar actions", "stage1: a write that needs approval", "stage1: a connection to choose",
		"stage1: references among many documents", "stage1: recall of a figure found steps earlier",
		"stage1: traps inviting a parameters key or a forbidden field", "stage1: nothing to fill",
		"stage2: numbers", "stage2: dates", "stage2: ids", "stage2: free text", "stage2: nothing to fill",
		"stage2: traps inviting an invented value",
	} {
		if !situations[want] {
			t.Errorf("no case of %q", want)
		}
	}
}

// TestBuiltinStage1Reachable: every Stage 1 expectation can be met from
// what the case shows: its references resolve among the case's
// documents, its connection is listed and of the action's kind, its
// fields are the action's parameters, its facts appear in the messages,
// and the expected reply passes prompts.ParseStage1.
func TestBuiltinStage1Reachable(t *testing.T) {
	t.Parallel()
	s, err := qualify.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range s.Stage(workflow.StageOne) {
		msgs := c.Messages // as written: the ids references name
		if _, err := workflow.ResolveDocuments(filled(msgs), c.Expect.Documents); err != nil && len(c.Expect.Documents) > 0 {
			t.Errorf("%s: expected references do not resolve: %v", c.ID, err)
		}
		spec, _ := c.Catalogue.Action(c.Expect.Action)
		props := properties(t, spec.Parameters)
		for _, f := range append(slices.Clone(c.Expect.Fields), c.Expect.MayAsk...) {
			if _, ok := props[f]; !ok {
				t.Errorf("%s: field %q is not a parameter of %s", c.ID, f, spec.Name)
			}
		}
		var shown []string
		for _, m := range msgs {
			shown = append(shown, m.Text, m.Findings, m.Summary)
			for _, d := range m.Documents {
				shown = append(shown, d.Name)
			}
		}
		for _, f := range c.Expect.Carries {
			if !qualify.Carried(strings.Join(shown, "\n"), []string{f}) {
				t.Errorf("%s: fact %q appears in no message", c.ID, f)
			}
		}
		reply := perfectStage1(c)
		res := prompts.ParseStage1(reply, prompts.Stage1Env{Registry: c.Catalogue, Messages: filled(msgs), Connections: c.Catalogue.Connections("")})
		if len(res.Problems) > 0 {
			t.Errorf("%s: the expected reply is rejected: %v", c.ID, res.Problems)
		}
	}
}

// TestBuiltinStage2Reachable: every expected Stage 2 value appears in
// what Stage 2 is shown (no expected value is ungrounded, nor any accepted
// form), the expected parameters are valid for the action and were
// asked, and the expected reply passes Builder.ParseStage2.
func TestBuiltinStage2Reachable(t *testing.T) {
	t.Parallel()
	s, err := qualify.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	b := newBuilder(t)
	for _, c := range s.Stage(workflow.StageTwo) {
		sel := *c.Selection
		spec, _ := c.Catalogue.Action(sel.Action)
		g := prompts.Stage2Grounding(sel, spec)
		if u := prompts.Ungrounded(c.Expect.Values, g); len(u) > 0 {
			t.Errorf("%s: expected values not shown to Stage 2: %v", c.ID, u)
		}
		for k, forms := range c.Expect.Accepted {
			for _, f := range forms {
				if u := prompts.Ungrounded(map[string]any{k: f}, g); len(u) > 0 {
					t.Errorf("%s: accepted form %v of %s not shown to Stage 2", c.ID, f, k)
				}
			}
		}
		for _, k := range c.Expect.Absent {
			if _, ok := c.Expect.Values[k]; ok {
				t.Errorf("%s: %s is both expected and absent", c.ID, k)
			}
			if !slices.ContainsFunc(sel.ParametersSchema.Fields, func(f workflow.FieldSpec) bool { return f.Name == k }) {
				t.Errorf("%s: absent %s was not asked: the check would prove nothing", c.ID, k)
			}
		}
		reply, _ := json.Marshal(map[string]any{"schema": prompts.ParametersSchemaID, "parameters": c.Expect.Values})
		if res := b.ParseStage2(string(reply), spec, sel.ParametersSchema.Fields, c.Catalogue); len(res.Problems) > 0 {
			t.Errorf("%s: the expected reply is rejected: %v", c.ID, res.Problems)
		}
	}
}

// TestCasesRefused: a cases file with an unknown key, a case without an
// id, an unknown stage or an action outside its catalogue is refused with
// every problem named.
func TestCasesRefused(t *testing.T) {
	t.Parallel()
	_, err := qualify.ParseCases(strings.NewReader(`{"id":"a","stage":"stage1","expectt":{}}`))
	if err == nil || !strings.Contains(err.Error(), "line 1") || !strings.Contains(err.Error(), "expectt") {
		t.Errorf("unknown key: %v", err)
	}
	cases, err := qualify.ParseCases(strings.NewReader(strings.Join([]string{
		`// a comment`,
		`{"stage":"stage3","catalogue":"support","expect":{}}`,
		``,
		`{"id":"b","stage":"stage1","catalogue":"support","messages":[{"role":"user","text":"hi"}],"expect":{"action":"nope.nothing"}}`,
		`{"id":"c","stage":"stage2","catalogue":"nowhere","expect":{}}`,
		`{"id":"e","stage":"stage2","catalogue":"support","selection":{"action":"kb.search","parametersSchema":{"fields":[]}},"expect":{"values":{"query":"x"}}}`,
		`{"id":"d","stage":"stage1","catalogue":"support","messages":[{"role":"user","text":"hi"}],"expect":{"action":"kb.search","documents":["docItem:doc_01jeaaaaaaaaaaaaaaaaaaaaaa:x.pdf"],"connection":"crm"}}`,
	}, "\n")))
	if err != nil || len(cases) != 5 {
		t.Fatalf("ParseCases: %d cases, %v", len(cases), err)
	}
	_, err = qualify.Load(cases)
	for _, want := range []string{"case #1: the case has no id", `stage must be stage1 or stage2, not "stage3"`,
		`case b: expect.action "nope.nothing" is not in the catalogue`, `case c: catalogue "nowhere" does not exist`,
		`case d: expect.documents: document reference "docItem:doc_01jeaaaaaaaaaaaaaaaaaaaaaa:x.pdf"`, `case d: expect.connection "crm" is not among the connections`,
		"case e: expect.values.query is not among the fields the selection asks for"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v\nlacks %q", err, want)
		}
	}
}

func properties(t *testing.T, schema json.RawMessage) map[string]any {
	t.Helper()
	var s struct {
		Properties map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		t.Fatal(err)
	}
	return s.Properties
}

// filled is msgs with their documents' owners set, as the run fills them.
func filled(msgs []workflow.Message) []workflow.Message {
	out := slices.Clone(msgs)
	for i := range out {
		out[i].WorkflowID = "wf_qualify"
		out[i].Documents = slices.Clone(out[i].Documents)
		for j := range out[i].Documents {
			out[i].Documents[j].WorkflowID, out[i].Documents[j].MessageID = "wf_qualify", out[i].ID
		}
	}
	return out
}

// TestCarried: a fact is carried when the text gives it in any form
// grounding reads; a short figure must be there as a number.
func TestCarried(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text  string
		facts []string
		want  bool
	}{
		{"stock total 31 units", []string{"31"}, true},
		{"stock total 310 units", []string{"31"}, false},
		{"open amount: 12450.00 EUR", []string{"12,450.00"}, true},
		{"payment PAY-77120, refund 120 EUR", []string{"PAY-77120", "120.00"}, true},
		{"payment PAY-77120", []string{"PAY-77120", "120.00"}, false},
		{"due 5 May 2025", []string{"2025-05-05"}, true},
		{"anything", nil, true},
	} {
		if got := qualify.Carried(tc.text, tc.facts); got != tc.want {
			t.Errorf("Carried(%q, %q) = %v", tc.text, tc.facts, got)
		}
	}
}
