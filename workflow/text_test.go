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

// oneLineReference is OneLine's definition, which its fast path must match.
func oneLineReference(s string) string { return strings.Join(strings.Fields(s), " ") }

func TestOneLineMatchesFields(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"", " ", "a", "a b", "a  b", " a", "a ", "a\tb", "a\nb", "a\rb", "a\vb", "a\fb",
		"already one line", "é ü", "a\u00a0b", "a\u0085b", "a\u2003b", "a\u3000b", "\u00a0a",
		"a\xffb", "\xff", "a \xff ", "plain text, with punctuation: ok.", "trailing\n", "x  \t y",
	} {
		got, want := OneLine(in), oneLineReference(in)
		if got != want {
			t.Errorf("OneLine(%q) = %q, want %q", in, got, want)
		}
		if isOneLine(in) != (in == want) {
			t.Errorf("isOneLine(%q) = %v, want %v", in, isOneLine(in), in == want)
		}
	}
}

func FuzzOneLine(f *testing.F) {
	for _, s := range []string{"", "a b", " a\n b ", "é\u00a0x", "\xff \xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := OneLine(s), oneLineReference(s); got != want {
			t.Fatalf("OneLine(%q) = %q, want %q", s, got, want)
		}
	})
}

func BenchmarkOneLine(b *testing.B) {
	clean := strings.TrimSpace(strings.Repeat("a line of text that needs nothing done ", 10))
	messy := strings.Repeat("a line\n\tof  text ", 10)
	b.Run("clean", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = OneLine(clean)
		}
	})
	b.Run("messy", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = OneLine(messy)
		}
	})
}
