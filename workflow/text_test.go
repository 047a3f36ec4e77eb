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

func TestClipAndOneLine(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"eleven char", 10, "eleven cha…"},
		{"ééé", 3, "é…"}, // never half a rune
		{"ééé", 4, "éé…"},
		{"abc", 0, "…"},
	} {
		if got := Clip(tt.in, tt.n); got != tt.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
	if got := OneLine("  a\n\tb   c \r\n"); got != "a b c" {
		t.Errorf("OneLine = %q, want %q", got, "a b c")
	}
}

func TestExcerptAndClipRunes(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in      string
		n       int
		excerpt string
		clip    string
	}{
		{"short", 10, "short", "short"},
		{"a\nb  c", 10, "a b c", "a\nb  c"},
		{"ééééé", 5, "ééééé", "ééééé"}, // 10 bytes, 5 runes: not cut
		{"éééééé", 5, "éééé…", "éééé…"},
		{"abc defgh", 5, "abc…", "abc …"}, // an excerpt never ends in a space
		{"line one\nline two", 9, "line one…", "line one…"},
		{"anything", 0, "", ""},
	} {
		if got := Excerpt(tt.in, tt.n); got != tt.excerpt {
			t.Errorf("Excerpt(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.excerpt)
		}
		if got := ClipRunes(tt.in, tt.n); got != tt.clip {
			t.Errorf("ClipRunes(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.clip)
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
