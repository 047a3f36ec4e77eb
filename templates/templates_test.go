package templates

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/twostep/twostep/workflow"
)

func TestLoadBuiltin(t *testing.T) {
	t.Parallel()
	set, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := set.Names(), []string{"compact", "plan", "repair", "replan", "stage1", "stage1_single", "stage2"}; !slices.Equal(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	tests := []struct {
		name string
		keys []string
	}{
		{Stage1, []string{KeyAvailableConnectionsIndex, KeyAvailableDocumentsIndex, KeyAvailableMethods, KeyUserPrompt, KeyValidationFeedback, KeyWorkflowHistoryLatest, KeyWorkflowHistorySealed}},
		{Stage1Single, []string{KeyAvailableConnectionsIndex, KeyAvailableDocumentsIndex, KeyAvailableMethods, KeyUserPrompt, KeyValidationFeedback, KeyWorkflowHistory}},
		{Stage2, []string{KeyActionObjective, KeyParametersContext, KeyParametersSchema, KeySelectedAction, KeyValidationFeedback}},
		{Plan, []string{KeyAvailableConnectionsIndex, KeyAvailableDocumentsIndex, KeyAvailableMethods, KeyUserPrompt, KeyValidationFeedback, KeyWorkflowHistory}},
		{Repair, []string{KeyAvailableMethods, KeyPreviousResponse, KeyValidationFeedback}},
		{Replan, []string{KeyAvailableConnectionsIndex, KeyAvailableDocumentsIndex, KeyAvailableMethods, KeyPlanProgress, KeyUserPrompt, KeyWorkflowHistory}},
		{Compact, []string{KeyCompactedEntries, KeyPreviousSummary, KeySummaryLimit, KeyUserPrompt}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl, err := set.Get(tt.name)
			if err != nil {
				t.Fatal(err)
			}
			if got := tmpl.Keys(); !slices.Equal(got, tt.keys) {
				t.Errorf("Keys() = %v, want %v", got, tt.keys)
			}
			if tmpl.Name != tt.name || !strings.Contains(tmpl.Source, "--- system ---") {
				t.Errorf("Name = %q, Source starts %q", tmpl.Name, tmpl.Source[:20])
			}
		})
	}
	if _, err := set.Get("nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get(nope) error = %v, want ErrNotFound", err)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, tmpl, src, want string
	}{
		{"unknown key", "x", "--- user ---\nhi {{KEY:NOPE}}", `unknown placeholder key "NOPE"`},
		{"lower-case key", "x", "--- user ---\n{{KEY:user_prompt}}", "malformed placeholder"},
		{"unterminated", "x", "--- user ---\n{{KEY:USER_PROMPT", "unterminated placeholder"},
		{"text before divider", "x", "hello\n--- user ---\nhi", "text before the first role divider"},
		{"empty section", "x", "--- system ---\n\n--- user ---\nhi", "the system section is empty"},
		{"no sections", "x", "", "no role sections"},
		{"user prompt in stage2", Stage2, "--- user ---\n{{KEY:USER_PROMPT}}", `"USER_PROMPT" is not allowed in this template`},
		{"history in stage2", Stage2, "--- user ---\n{{KEY:WORKFLOW_HISTORY}}", `"WORKFLOW_HISTORY" is not allowed`},
		{"connections in stage2", Stage2, "--- user ---\n{{KEY:AVAILABLE_CONNECTIONS_INDEX}}", "not allowed"},
		{"schema in stage1", Stage1, "--- user ---\n{{KEY:PARAMETERS_SCHEMA}}", "not allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse(tt.tmpl, tt.src)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse() error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestRender(t *testing.T) {
	t.Parallel()
	tmpl, err := Parse("custom", "\n--- system ---\nYou help.\n--- user ---\n\nAsk: {{KEY:USER_PROMPT}}\nAgain: {{KEY:USER_PROMPT}} {{ not a placeholder }}\n{{KEY:VALIDATION_FEEDBACK}}\n\n")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tmpl.Keys(), []string{KeyUserPrompt, KeyValidationFeedback}; !slices.Equal(got, want) {
		t.Fatalf("Keys() = %v, want %v", got, want)
	}
	t.Run("values verbatim, never re-scanned", func(t *testing.T) {
		parts, err := tmpl.Render(map[string]string{KeyUserPrompt: "{{KEY:VALIDATION_FEEDBACK}}", KeyValidationFeedback: ""})
		if err != nil {
			t.Fatal(err)
		}
		want := []Part{
			{Role: workflow.PromptSystem, Content: "You help."},
			{Role: workflow.PromptUser, Content: "Ask: {{KEY:VALIDATION_FEEDBACK}}\nAgain: {{KEY:VALIDATION_FEEDBACK}} {{ not a placeholder }}"},
		}
		if !slices.Equal(parts, want) {
			t.Errorf("Render() = %q, want %q", parts, want)
		}
	})
	t.Run("missing key is an error", func(t *testing.T) {
		_, err := tmpl.Render(map[string]string{KeyUserPrompt: "x"})
		if err == nil || !strings.Contains(err.Error(), "no value for VALIDATION_FEEDBACK") {
			t.Errorf("Render() error = %v, want a missing VALIDATION_FEEDBACK", err)
		}
	})
}

func TestLoadOverride(t *testing.T) {
	t.Parallel()
	t.Run("replaces and adds", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, "stage2.tmpl", "--- user ---\nOVERRIDDEN {{KEY:PARAMETERS_SCHEMA}}")
		write(t, dir, "extra.tmpl", "--- user ---\n{{KEY:USER_PROMPT}}")
		write(t, dir, "notes.txt", "ignored")
		set, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := set.Get(Stage2)
		if !strings.Contains(got.Source, "OVERRIDDEN") {
			t.Errorf("stage2 not overridden: %q", got.Source)
		}
		if got, want := set.Names(), []string{"compact", "extra", "plan", "repair", "replan", "stage1", "stage1_single", "stage2"}; !slices.Equal(got, want) {
			t.Errorf("Names() = %v, want %v", got, want)
		}
	})
	t.Run("bad override fails the load", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, "stage1.tmpl", "--- user ---\n{{KEY:MYSTERY}}")
		if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), `unknown placeholder key "MYSTERY"`) {
			t.Errorf("Load() error = %v, want unknown key", err)
		}
	})
	t.Run("missing dir fails the load", func(t *testing.T) {
		if _, err := Load(filepath.Join(t.TempDir(), "absent")); err == nil {
			t.Error("Load(absent dir) succeeded")
		}
	})
}

func TestWithAndnewSet(t *testing.T) {
	t.Parallel()
	a, _ := Parse("a", "--- user ---\nA")
	b, _ := Parse("a", "--- user ---\nB")
	s := newSet(a)
	s2 := s.With(b)
	got1, _ := s.Get("a")
	got2, _ := s2.Get("a")
	if got1.Source != a.Source || got2.Source != b.Source {
		t.Errorf("With changed the receiver or did not replace: %q, %q", got1.Source, got2.Source)
	}
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestRenderDropsEmptyPlaceholderLine(t *testing.T) {
	t.Parallel()
	tmpl, err := Parse("x", "--- user ---\nA\n\n{{KEY:VALIDATION_FEEDBACK}}\nB {{KEY:USER_PROMPT}}.\n")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		feedback, prompt, want string
	}{
		{"", "", "A\n\nB ."},
		{"F", "p", "A\n\nF\nB p."},
	}
	for _, tt := range tests {
		parts, err := tmpl.Render(map[string]string{KeyValidationFeedback: tt.feedback, KeyUserPrompt: tt.prompt})
		if err != nil {
			t.Fatal(err)
		}
		if parts[0].Content != tt.want {
			t.Errorf("Render(%q, %q) = %q, want %q", tt.feedback, tt.prompt, parts[0].Content, tt.want)
		}
	}
}

// RenderPieces gives what Render gives with the pieces joined as the key's
// value, and that value (used twice, in two sections, empty and alone on
// its line, at a part's start and end, not used at all); a missing other
// key is still an error.
func TestRenderPiecesMatchesRender(t *testing.T) {
	t.Parallel()
	sources := []string{
		"--- system ---\nS {{KEY:WORKFLOW_HISTORY}}\n--- user ---\nA\n\n{{KEY:WORKFLOW_HISTORY}}\nB {{KEY:USER_PROMPT}}.\n{{KEY:WORKFLOW_HISTORY}}\n",
		"--- user ---\n{{KEY:WORKFLOW_HISTORY}}\n\n{{KEY:USER_PROMPT}}\n",
		"--- user ---\nonly {{KEY:USER_PROMPT}}\n",
		"--- user ---\n{{KEY:USER_PROMPT}}\n\n{{KEY:WORKFLOW_HISTORY}}",
	}
	pieceSets := [][]string{nil, {""}, {"one"}, {"- a", "\n", "- b  ", "\n(2 older entries omitted)"}, {"\n\n", "x", "\n "}}
	for _, src := range sources {
		tmpl, err := Parse("x", src)
		if err != nil {
			t.Fatal(err)
		}
		for _, pieces := range pieceSets {
			joined := strings.Join(pieces, "")
			want, err := tmpl.Render(map[string]string{KeyUserPrompt: "p", KeyWorkflowHistory: joined})
			if err != nil {
				t.Fatal(err)
			}
			got, value, err := tmpl.RenderPieces(TextOutput, map[string]string{KeyUserPrompt: "p", KeyWorkflowHistory: "ignored"}, KeyWorkflowHistory, pieces)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%q with %q: RenderPieces = %q, Render = %q", src, pieces, got, want)
			}
			if wantValue := joined; !tmpl.Uses(KeyWorkflowHistory) {
				wantValue = ""
				if value != wantValue {
					t.Errorf("%q: value = %q for a key the template does not use", src, value)
				}
			} else if value != wantValue {
				t.Errorf("%q with %q: value = %q, want %q", src, pieces, value, wantValue)
			}
		}
		if !tmpl.Uses(KeyUserPrompt) || tmpl.Uses(KeyValidationFeedback) {
			t.Errorf("%q: Uses is wrong", src)
		}
		if _, _, err := tmpl.RenderPieces(TextOutput, map[string]string{}, KeyWorkflowHistory, []string{"h"}); err == nil || !strings.Contains(err.Error(), "no value for USER_PROMPT") {
			t.Errorf("%q: RenderPieces without USER_PROMPT: error %v", src, err)
		}
	}
}

// A section without placeholders is rendered once, by Parse: every render
// returns the same string (trimmed as any part), and allocates nothing
// for it. (Not parallel: AllocsPerRun.)
func TestFixedSectionRenderedOnce(t *testing.T) {
	tmpl, err := Parse("custom", "--- system ---\n\n \nYou help.\n  Rules.\n\n\t\n--- user ---\nAsk: {{KEY:USER_PROMPT}}\n")
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]string{KeyUserPrompt: "why?"}
	first, err := tmpl.Render(values)
	if err != nil {
		t.Fatal(err)
	}
	second, err := tmpl.Render(values)
	if err != nil {
		t.Fatal(err)
	}
	want := []Part{{Role: workflow.PromptSystem, Content: "You help.\n  Rules."}, {Role: workflow.PromptUser, Content: "Ask: why?"}}
	if !slices.Equal(first, want) || !slices.Equal(second, want) {
		t.Fatalf("Render() = %q then %q, want %q", first, second, want)
	}
	if unsafe.StringData(first[0].Content) != unsafe.StringData(second[0].Content) {
		t.Error("the system part was copied on a render")
	}
	if unsafe.StringData(first[1].Content) == unsafe.StringData(second[1].Content) {
		t.Error("the user part, which has a placeholder, was shared between renders")
	}
	// The parts slice and the user part: nothing for the system part.
	if n := testing.AllocsPerRun(100, func() { _, _ = tmpl.Render(values) }); n != 2 {
		t.Errorf("Render allocates %v times, want 2", n)
	}
}

// An output block is rendered only for its Output: the reply's shape in
// text mode, a line naming the tool in native mode; the marker lines never.
func TestOutputBlocks(t *testing.T) {
	t.Parallel()
	src := "--- system ---\nRules:\n{{IF:TEXT_OUTPUT}}\n- Reply with {\"a\": 1}.\n{{END}}\n{{IF:NATIVE_OUTPUT}}\n- Answer with the tool.\n{{END}}\n- Be brief.\n" +
		"--- user ---\n{{KEY:USER_PROMPT}}\n{{IF:TEXT_OUTPUT}}\nReply with the JSON object only.\n{{END}}\n"
	tmpl, err := Parse("x", src)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		out          Output
		system, user string
	}{
		{TextOutput, "Rules:\n- Reply with {\"a\": 1}.\n- Be brief.", "go\nReply with the JSON object only."},
		{NativeOutput, "Rules:\n- Answer with the tool.\n- Be brief.", "go"},
	}
	for _, tt := range tests {
		parts, err := tmpl.RenderFor(tt.out, map[string]string{KeyUserPrompt: "go"})
		if err != nil {
			t.Fatal(err)
		}
		if parts[0].Content != tt.system || parts[1].Content != tt.user {
			t.Errorf("output %d: got %q / %q, want %q / %q", tt.out, parts[0].Content, parts[1].Content, tt.system, tt.user)
		}
	}
	for _, bad := range []string{
		"--- user ---\n{{IF:TEXT_OUTPUT}}\nx\n",
		"--- user ---\nx\n{{END}}\n",
		"--- user ---\n{{IF:TEXT_OUTPUT}}\n{{IF:NATIVE_OUTPUT}}\nx\n{{END}}\n{{END}}\n",
	} {
		if _, err := Parse("x", bad); err == nil {
			t.Errorf("Parse(%q) accepted an unbalanced output block", bad)
		}
	}
}

// StablePrefix counts the leading sections that use none of the keys.
func TestStablePrefix(t *testing.T) {
	t.Parallel()
	tmpl, err := Parse(Stage1, "--- system ---\nrules\n--- user ---\n{{KEY:AVAILABLE_METHODS}}\n{{KEY:USER_PROMPT}}\n--- user ---\n{{KEY:WORKFLOW_HISTORY}}\n{{KEY:VALIDATION_FEEDBACK}}\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		keys []string
		want int
	}{
		{[]string{KeyWorkflowHistory, KeyValidationFeedback}, 2},
		{[]string{KeyUserPrompt}, 1},
		{[]string{KeyAvailableConnectionsIndex}, 3},
	} {
		if got := tmpl.StablePrefix(tt.keys...); got != tt.want {
			t.Errorf("StablePrefix(%v) = %d, want %d", tt.keys, got, tt.want)
		}
	}
}

// An empty placeholder line between two blank lines leaves one blank line,
// not two.
func TestEmptyLineBetweenBlankLines(t *testing.T) {
	t.Parallel()
	tmpl, err := Parse("x", "--- user ---\n{{KEY:USER_PROMPT}}\n\n{{KEY:VALIDATION_FEEDBACK}}\n\nReply.\n")
	if err != nil {
		t.Fatal(err)
	}
	for feedback, want := range map[string]string{"": "go\n\nReply.", "fix it": "go\n\nfix it\n\nReply."} {
		parts, err := tmpl.Render(map[string]string{KeyUserPrompt: "go", KeyValidationFeedback: feedback})
		if err != nil {
			t.Fatal(err)
		}
		if parts[0].Content != want {
			t.Errorf("feedback %q: %q, want %q", feedback, parts[0].Content, want)
		}
	}
}

// TestRenderRefusesAnOversizePrompt: a template that repeats a value past
// MaxRenderedBytes is refused with ErrTooLarge (naming the template) before
// the part is built; one just under the limit renders.
func TestRenderRefusesAnOversizePrompt(t *testing.T) {
	t.Parallel()
	tmpl, err := Parse(Stage1, "--- system ---\nfixed\n--- user ---\n"+strings.Repeat("{{KEY:USER_PROMPT}}", 1000)+"\n")
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]string{"USER_PROMPT": strings.Repeat("x", MaxRenderedBytes/1000+1)}
	if _, err := tmpl.Render(values); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), `"stage1"`) {
		t.Errorf("Render over the limit = %v, want ErrTooLarge naming the template", err)
	}
	values["USER_PROMPT"] = strings.Repeat("x", MaxRenderedBytes/1000-1)
	if parts, err := tmpl.Render(values); err != nil || len(parts) != 2 {
		t.Errorf("Render under the limit = %d parts, %v", len(parts), err)
	}
}

// newSet makes a Set from already parsed templates.
func newSet(ts ...Template) *Set {
	s := &Set{byName: make(map[string]Template, len(ts))}
	for _, t := range ts {
		s.byName[t.Name] = t
	}
	return s
}
