package approval

import (
	"reflect"
	"strings"
	"testing"

	"github.com/twostep/twostep/actions"
)

// TestIntentRule: the rule intent holds every call of its action (reads
// too) and asks for an intent approval; other actions and
// workflow.complete do not.
func TestIntentRule(t *testing.T) {
	t.Parallel()
	r := newRegistry(t, true)
	a, err := New(Config{Actions: map[string]string{"document.generate": Intent}}, r, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if needed, _ := a.NeedsApproval("document.generate", map[string]any{}); !needed || !a.NeedsIntentApproval("document.generate") {
		t.Errorf("document.generate under intent: needs approval %v, intent %v; want both", needed, a.NeedsIntentApproval("document.generate"))
	}
	if a.NeedsIntentApproval(actions.HTTPRequestAction) || a.NeedsIntentApproval("workflow.complete") {
		t.Errorf("an action without the intent rule asks for an intent approval")
	}
}

// TestConstraintFragmentProblems: a constraint must be a JSON Schema
// object that compiles, with no external reference; each problem names
// its field.
func TestConstraintFragmentProblems(t *testing.T) {
	t.Parallel()
	a := &Policy{}
	tests := []struct {
		name        string
		constraints map[string]any
		want        []string // substrings of the lines, in order
	}{
		{"maximum", map[string]any{"priority": map[string]any{"maximum": 2}}, nil},
		{"enum and pattern", map[string]any{"queue": map[string]any{"enum": []any{"ops", "dev"}}, "title": map[string]any{"pattern": "^[A-Z]"}}, nil},
		{"empty fragment", map[string]any{"priority": map[string]any{}}, nil},
		{"not an object", map[string]any{"priority": 2.0}, []string{"priority: must be a JSON Schema object"}},
		{"bad keyword value", map[string]any{"priority": map[string]any{"maximum": "two"}}, []string{"priority: does not compile"}},
		{"bad pattern", map[string]any{"title": map[string]any{"pattern": "("}}, []string{"title: does not compile"}},
		{"external reference", map[string]any{"title": map[string]any{"$ref": "http://127.0.0.1:9/x.json"}}, []string{"title: does not compile"}},
		{"too large", map[string]any{"title": map[string]any{"enum": []any{strings.Repeat("x", 20<<10)}}}, []string{"title: is "}},
		{"two bad, sorted", map[string]any{"b": 1.0, "a": "x"}, []string{"a: must be", "b: must be"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := a.ConstraintFragmentProblems(tt.constraints)
			if len(got) != len(tt.want) {
				t.Fatalf("problems = %q, want %d like %q", got, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %d = %q, want it to contain %q", i, got[i], w)
				}
			}
		})
	}
}

// TestConstraintProblems: each value is judged by its field's constraint
// (numbers whatever their Go type); a field the parameters leave out is
// not judged.
func TestConstraintProblems(t *testing.T) {
	t.Parallel()
	a := &Policy{}
	c := map[string]any{"priority": map[string]any{"maximum": 2}, "queue": map[string]any{"enum": []any{"ops"}}}
	tests := []struct {
		params map[string]any
		want   []string // the fields rejected
	}{
		{map[string]any{"priority": 2, "queue": "ops"}, nil},
		{map[string]any{"priority": 1.5}, nil},
		{map[string]any{"title": "anything"}, nil},
		{map[string]any{"priority": 5, "queue": "ops"}, []string{"/priority"}},
		{map[string]any{"priority": 5.0, "queue": "dev"}, []string{"/priority", "/queue"}},
	}
	for _, tt := range tests {
		got := a.ConstraintProblems(c, tt.params)
		var fields []string
		for _, line := range got {
			field, rest, _ := strings.Cut(line, ": ")
			fields = append(fields, field)
			if !strings.Contains(rest, "the approved constraint is") {
				t.Errorf("line %q does not quote the approved constraint", line)
			}
		}
		if !reflect.DeepEqual(fields, tt.want) {
			t.Errorf("ConstraintProblems(%v) = %q, want fields %v", tt.params, got, tt.want)
		}
	}
}
