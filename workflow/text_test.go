package workflow

import (
	"strings"
	"testing"
)

func TestCount(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		n                int
		singular, plural string
		want             string
	}{
		{0, "document", "", "0 documents"},
		{1, "document", "", "1 document"},
		{2, "document", "", "2 documents"},
		{1, "entry", "entries", "1 entry"},
		{3, "entry", "entries", "3 entries"},
	} {
		if got := Count(tt.n, tt.singular, tt.plural); got != tt.want {
			t.Errorf("Count(%d, %q, %q) = %q, want %q", tt.n, tt.singular, tt.plural, got, tt.want)
		}
	}
}

func TestTitleOf(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 150)
	for _, tt := range []struct{ in, want string }{
		{"Summarise the notes", "Summarise the notes"},
		{"\n  \n  Write   a\tnote  \nsecond line", "Write a note"},
		{"", ""},
		{" \n\t", ""},
		{long, strings.Repeat("é", 99) + "…"},
	} {
		if got := TitleOf(tt.in); got != tt.want {
			t.Errorf("TitleOf(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestUserLabelIsAReferenceLabel(t *testing.T) {
	t.Parallel()
	if got := UserLabel(3); got != "round3_user_context" {
		t.Errorf("UserLabel(3) = %q, want round3_user_context", got)
	}
	if _, err := ParseReference("docList:" + UserLabel(12)); err != nil {
		t.Errorf("UserLabel(12) is not a valid reference label: %v", err)
	}
}
