package prompts

import (
	"flag"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/twostep/twostep/placeholders"
	"github.com/twostep/twostep/templates"
	"github.com/twostep/twostep/workflow"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func newBuilder(t testing.TB, budget int) *Builder {
	t.Helper()
	set, err := templates.Load("")
	if err != nil {
		t.Fatal(err)
	}
	return NewBuilder(set, Options{HistoryBudget: budget})
}

// golden compares the rendered prompt with testdata/name.golden.
func golden(t *testing.T, name string, r Rendered) {
	t.Helper()
	var b strings.Builder
	b.WriteString("template: " + r.Template + "\n")
	for _, m := range r.Messages {
		b.WriteString("=== " + m.Role + " ===\n" + m.Content + "\n")
	}
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./prompts -update)", err)
	}
	if diff := cmp.Diff(string(want), b.String()); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}

func TestGoldenPrompts(t *testing.T) {
	wf, msgs := twoRounds()
	reg := newRegistry()
	stage1 := Stage1Input{Workflow: wf, Messages: msgs, Actions: reg.Actions(), Connections: reg.Connections("u1")}
	sel := workflow.Selection{Action: "ai.process", ActionObjective: "Summarise ACME's contract terms in German",
		ParametersContext: "Contract: 3 years, 90-day notice. Audience: ACME account manager J. Doe.",
		ParametersSchema: workflow.ParametersSchema{Fields: []workflow.FieldSpec{
			{Name: "language", Type: "string", Required: true, Description: "German: de"},
			{Name: "maxWords", Type: "number", Description: "Keep it short"},
		}}}
	spec, _ := reg.Action("ai.process")
	tests := []struct {
		name   string
		render func(b *Builder) (Rendered, error)
		budget int
	}{
		{"stage1_two_rounds", func(b *Builder) (Rendered, error) { return b.Stage1(stage1) }, 0},
		{"stage1_budget", func(b *Builder) (Rendered, error) { return b.Stage1(stage1) }, 700},
		{"stage1_retry", func(b *Builder) (Rendered, error) {
			in := stage1
			in.Feedback = Feedback(ParseStage1(`{"action": "crm.find", "parameters": {"x": 1}}`, Stage1Env{Registry: reg}).Problems)
			return b.Stage1(in)
		}, 0},
		{"stage1_single", func(b *Builder) (Rendered, error) {
			return NewBuilder(b.Templates(), Options{HistoryLayout: LayoutSingle}).Stage1(stage1)
		}, 0},
		{"stage1_sealed", func(b *Builder) (Rendered, error) {
			// A small latest budget seals round 2's first steps too.
			return NewBuilder(b.Templates(), Options{LatestBudget: 300}).Stage1(stage1)
		}, 0},
		{"stage1_native", func(b *Builder) (Rendered, error) {
			in := stage1
			in.Output = templates.NativeOutput
			return b.Stage1(in)
		}, 0},
		{"stage2", func(b *Builder) (Rendered, error) { return b.Stage2(Stage2Input{Selection: sel, Action: spec}) }, 0},
		{"stage2_native", func(b *Builder) (Rendered, error) {
			return b.Stage2(Stage2Input{Selection: sel, Action: spec, Output: templates.NativeOutput})
		}, 0},
		{"stage2_retry", func(b *Builder) (Rendered, error) {
			fb := Feedback(ParseStage2(`{"schema": "parameters_v1", "parameters": {"maxWords": "short"}}`, spec, askedFields("instruction", "language", "maxWords"), reg).Problems)
			return b.Stage2(Stage2Input{Selection: sel, Action: spec, Feedback: fb})
		}, 0},
		{"plan", func(b *Builder) (Rendered, error) { return b.Plan(stage1) }, 0},
		{"compact", func(b *Builder) (Rendered, error) {
			// A newest step with a long result: the older entries must go.
			long := append(slices.Clone(msgs), workflow.Message{ID: "msg_r2a3", WorkflowID: wf.ID, Seq: 7, Round: 2, Step: 3,
				Role: workflow.RoleAction, Action: "ai.process", ActionObjective: "Summarise the contract", Status: workflow.MessageSuccess,
				Summary: "ai.process succeeded", Findings: strings.Repeat("The contract runs for 3 years with a 90-day notice period. ", 8)})
			entries, prev := b.Compaction(long)
			if len(entries) == 0 {
				t.Fatal("no entries to compact at budget 200")
			}
			return b.Compact(CompactInput{Workflow: wf, Messages: long, Entries: entries, Previous: prev})
		}, 200},
		{"stage1_compacted", func(b *Builder) (Rendered, error) {
			in := stage1
			in.Messages = append(slices.Clone(msgs), workflow.Message{ID: "msg_sum", Seq: 7, Round: 2, Step: 3, Role: workflow.RoleSummary,
				CompactedThrough: 3, Text: "Round 1 extracted the 12-page contract (docItem:doc_text:contract.txt): 3 years, 90-day notice."})
			return b.Stage1(in)
		}, 1400},
		{"repair", func(b *Builder) (Rendered, error) {
			return b.Repair(RepairInput{Previous: `[{"action": "ai.process", "parameters": {`, Actions: reg.Actions()[:1], Feedback: Feedback([]string{"the reply is not valid JSON"})})
		}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := tt.render(newBuilder(t, tt.budget))
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tt.name, r)
		})
	}
}

func TestHistoryInStage1(t *testing.T) {
	t.Parallel()
	wf, msgs := twoRounds()
	reg := newRegistry()
	// The single layout: the history as one list.
	r, err := NewBuilder(newBuilder(t, 0).Templates(), Options{HistoryLayout: LayoutSingle}).Stage1(
		Stage1Input{Workflow: wf, Messages: msgs, Actions: reg.Actions(), Connections: reg.Connections("u1")})
	if err != nil {
		t.Fatal(err)
	}
	h := r.Placeholders[templates.KeyWorkflowHistory]
	// Newest first: round 2 newest to oldest, then round 1 newest to oldest.
	order := []string{"[round 2, step 2] action", "[round 2, step 1] action crm.lookup", "[round 2] user", "[round 1, step 2] assistant", "[round 1, step 1] action document.extract", "[round 1] user"}
	last := -1
	for _, s := range order {
		i := strings.Index(h, s)
		if i <= last {
			t.Fatalf("history order wrong at %q (index %d after %d):\n%s", s, i, last, h)
		}
		last = i
	}
	// Each action's summary is shown without its result, which appears
	// only inside a data fence: in full in the latest section (round 2's
	// entries), in one line in the sealed section (round 1's, sealed when
	// round 2 started).
	for _, m := range msgs {
		if m.Role != workflow.RoleAction {
			continue
		}
		head, _, _ := strings.Cut(m.Summary, "; result: ")
		if m.Round == 2 && !strings.Contains(h, "summary: "+head+"\n") && !strings.HasSuffix(h, "summary: "+head) {
			t.Errorf("history lacks the summary of %s (%q)", m.ID, head)
		}
		if m.Findings != "" && !strings.Contains(h, ">"+m.Findings+"</data tag=") {
			t.Errorf("history does not fence the findings of %s", m.ID)
		}
		if m.Findings != "" && strings.Contains(h, "; result: "+m.Findings) {
			t.Errorf("the result of %s appears outside its fence", m.ID)
		}
	}
	if got := r.Placeholders[templates.KeyUserPrompt]; got != "Now look up the customer ACME in the CRM." {
		t.Errorf("USER_PROMPT = %q", got)
	}

	// Without compaction, the sealed section drops its oldest lines to
	// fit the budget; the latest section is whole.
	small, err := newBuilder(t, 200).Stage1(Stage1Input{Workflow: wf, Messages: msgs, Actions: reg.Actions()})
	if err != nil {
		t.Fatal(err)
	}
	sealed, latest := small.Placeholders[templates.KeyWorkflowHistorySealed], small.Placeholders[templates.KeyWorkflowHistoryLatest]
	if len([]rune(sealed)) > 200 || !strings.HasSuffix(sealed, "omitted)") || strings.Contains(sealed, "[round 1] user") {
		t.Errorf("sealed section under a 200-character budget:\n%s", sealed)
	}
	if !strings.HasPrefix(latest, "- [round 2, step 2]") || !strings.Contains(latest, "- [round 2] user") {
		t.Errorf("latest section:\n%s", latest)
	}
}

func TestRenderErrors(t *testing.T) {
	t.Parallel()
	b := newBuilder(t, 0)
	if _, err := b.Render("nope", nil); workflow.KindOf(err) != workflow.KindNotFound {
		t.Errorf("Render(nope) error = %v, want not found", err)
	}
	if _, err := b.Render(templates.Stage2, map[string]string{templates.KeyActionObjective: "x"}); workflow.KindOf(err) != workflow.KindInternal ||
		!strings.Contains(err.Error(), "no value for") {
		t.Errorf("Render(stage2, partial) error = %v, want a missing key", err)
	}
	override, err := templates.Parse(templates.Stage2, "--- user ---\nONLY {{KEY:SELECTED_ACTION}}")
	if err != nil {
		t.Fatal(err)
	}
	reg := newRegistry()
	spec, _ := reg.Action("ai.process")
	r, err := b.Stage2(Stage2Input{Action: spec, Template: &override})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Messages) != 1 || !strings.HasPrefix(r.Messages[0].Content, "ONLY ai.process") || len(r.Placeholders) != 1 {
		t.Errorf("override render = %+v", r)
	}
}

// RenderTemplate copies the caller's values into Placeholders (only the
// builder's own renders hand their freshly built map over): changing one
// never changes the other.
func TestRenderTemplateDoesNotShareValues(t *testing.T) {
	t.Parallel()
	tmpl, err := templates.Parse("t", "--- user ---\n{{KEY:USER_PROMPT}}")
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]string{templates.KeyUserPrompt: "hello"}
	r, err := RenderTemplate(tmpl, values)
	if err != nil {
		t.Fatal(err)
	}
	r.Placeholders[templates.KeyUserPrompt] = "changed"
	if values[templates.KeyUserPrompt] != "hello" {
		t.Error("changing the rendered placeholders changed the caller's values")
	}
	b := newBuilder(t, 0)
	in := Stage1Input{Messages: nil, Actions: newRegistry().Actions()}
	s1, err := b.Stage1(in)
	if err != nil {
		t.Fatal(err)
	}
	set, _ := templates.Load("")
	st1, _ := set.Get(templates.Stage1)
	if got := slices.Sorted(maps.Keys(s1.Placeholders)); !slices.Equal(got, st1.Keys()) {
		t.Errorf("Stage 1 placeholders %v, want the template's keys %v", got, st1.Keys())
	}
}

// TestStage1RepeatsGiven: a caller's workflow.StepRepeats (a running
// round's, from Run.Repeats) is what the loop warning is written from;
// without one the warning is worked out from the messages, and the two
// agree on what the messages hold.
func TestStage1RepeatsGiven(t *testing.T) {
	t.Parallel()
	wf, msgs := twoRounds()
	reg := newRegistry()
	b := newBuilder(t, 0)
	feedback := func(rep *workflow.StepRepeats) string {
		t.Helper()
		r, err := b.Stage1(Stage1Input{Workflow: wf, Messages: msgs, Actions: reg.Actions(), Repeats: rep})
		if err != nil {
			t.Fatal(err)
		}
		return r.Placeholders[templates.KeyValidationFeedback]
	}
	newest, earlier, ok := workflow.Repeats(msgs, wf.Round)
	if got, want := feedback(&workflow.StepRepeats{Newest: newest, Earlier: earlier, Found: ok}), feedback(nil); got != want {
		t.Errorf("feedback from the given repeats %q, worked out %q", got, want)
	}
	given := workflow.StepRepeats{Newest: workflow.Message{Step: 7, Action: "crm.lookup"}, Earlier: []int{3, 5}, Found: true}
	if got := feedback(&given); !strings.Contains(got, "Step 7 called crm.lookup with the same parameters as steps 3 and 5") {
		t.Errorf("the given repeats are not what the warning says:\n%s", got)
	}
}

// Stage 1 shows the documents index within its budget; the plan, one call
// for the whole round, shows it whole.
func TestPlanShowsTheWholeDocumentsIndex(t *testing.T) {
	t.Parallel()
	wf, msgs := twoRounds()
	reg := newRegistry()
	b := NewBuilder(newBuilder(t, 0).Templates(), Options{DocumentsIndexBudget: 100})
	in := Stage1Input{Workflow: wf, Messages: msgs, Actions: reg.Actions(), Connections: reg.Connections("u1")}
	s1, err := b.Stage1(in)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := b.Plan(in)
	if err != nil {
		t.Fatal(err)
	}
	whole := placeholders.DocumentsIndex(msgs)
	if got := s1.Placeholders[templates.KeyAvailableDocumentsIndex]; got == whole || strings.Count(got, "docList:") != strings.Count(whole, "docList:") {
		t.Errorf("Stage 1's index under a 100-character budget:\n%s", got)
	}
	if got := plan.Placeholders[templates.KeyAvailableDocumentsIndex]; got != whole {
		t.Errorf("the plan's index =\n%s\nwant the whole index\n%s", got, whole)
	}
}

// Stage 1's cache marks (DESIGN §11.1): in the sections layout the first
// ends the stable prefix and the second the documents index, before the
// latest section; the single layout, whose history and index share a
// message, has the first alone.
func TestStage1CacheMarks(t *testing.T) {
	t.Parallel()
	wf, msgs := twoRounds()
	reg := newRegistry()
	in := Stage1Input{Workflow: wf, Messages: msgs, Actions: reg.Actions(), Connections: reg.Connections("u1")}
	sections, err := newBuilder(t, 0).Stage1(in)
	if err != nil {
		t.Fatal(err)
	}
	if sections.CachePrefix != 2 || sections.CacheSealed != 3 || !strings.HasPrefix(sections.Messages[2].Content, "# Earlier steps") ||
		!strings.HasPrefix(sections.Messages[3].Content, "# Latest steps") {
		t.Errorf("sections layout: marks %d and %d over %d messages", sections.CachePrefix, sections.CacheSealed, len(sections.Messages))
	}
	single, err := NewBuilder(newBuilder(t, 0).Templates(), Options{HistoryLayout: LayoutSingle}).Stage1(in)
	if err != nil {
		t.Fatal(err)
	}
	if single.Template != templates.Stage1Single || single.CachePrefix != 2 || single.CacheSealed != 0 {
		t.Errorf("single layout: template %q, marks %d and %d", single.Template, single.CachePrefix, single.CacheSealed)
	}
}
