package fieldnames

import "testing"

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
		if got := Forbidden(tt.name); got != tt.want {
			t.Errorf("Forbidden(%q) = %v, want %v (canonical %q)", tt.name, got, tt.want, Canonical(tt.name))
		}
	}
}

// TestKeyProblems: one line per look-alike key.
func TestKeyProblems(t *testing.T) {
	t.Parallel()
	got := KeyProblems(map[string]any{"query": 1, "ｈｉｓｔｏｒｙ": 2, "documеnts": 3})
	if len(got) != 2 {
		t.Errorf("KeyProblems = %q, want two lines", got)
	}
}
