package workflow

import (
	"strings"
	"testing"
)

// TestForbiddenLookalikes: the spellings the security probe got past the
// check, and mixes of them, are forbidden; names that only resemble a
// forbidden one are not.
func TestForbiddenLookalikes(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		want bool
	}{
		{"documents", true},
		{"Documents", true},
		{"documеntList", true},        // Cyrillic е
		{"ｄｏｃｕｍｅｎｔｓ", true},           // full width
		{"docu\u200bments", true},     // zero-width space
		{"documents ", true},          // trailing space
		{"\u00a0connections\t", true}, // no-break space, tab
		{"соnnесtiоns", true},         // Cyrillic с, о, е
		{"ΗISTORY", true},             // Greek Eta
		{"hist\u00adory", true},       // soft hyphen
		{"documentName", false},
		{"doc uments", false},
		{"query", false},
		{"histories", false},
	} {
		if got := IsForbiddenField(tt.name); got != tt.want {
			t.Errorf("IsForbiddenField(%q) = %v, want %v (canonical %q)", tt.name, got, tt.want, CanonicalFieldName(tt.name))
		}
	}
}

// TestForbiddenKeyProblemsLookalikes: one line per look-alike key.
func TestForbiddenKeyProblemsLookalikes(t *testing.T) {
	t.Parallel()
	got := ForbiddenKeyProblems(map[string]any{"query": 1, "ｈｉｓｔｏｒｙ": 2, "documеnts": 3})
	if len(got) != 2 {
		t.Errorf("ForbiddenKeyProblems = %q, want two lines", got)
	}
}

// TestStepInputsRefuseLookalikeKeys: the rule every step's inputs pass at
// execution (and an edited approval's parameters pass) is the canonical
// one, not a case-insensitive comparison only: a Cyrillic "е" or a
// full-width name is a forbidden key there too.
func TestStepInputsRefuseLookalikeKeys(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"documеnts", "ｈｉｓｔｏｒｙ", "connections\u200b"} {
		lines := CheckStepInputs(StepInputs{Parameters: map[string]any{key: "x", "query": "y"}})
		if len(lines) != 1 || !strings.Contains(lines[0], "forbidden key") {
			t.Errorf("CheckStepInputs(%q) = %q, want one forbidden-key line", key, lines)
		}
	}
}
