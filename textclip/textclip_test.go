package textclip

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClipAndCut(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		n    int
		clip string
		cut  string
	}{
		{"short", 10, "short", "short"},
		{"exactly10!", 10, "exactly10!", "exactly10!"},
		{"eleven char", 10, "eleven cha…", "eleven cha"},
		{"ééé", 3, "é…", "é"}, // never half a rune
		{"ééé", 4, "éé…", "éé"},
		{"abc", 0, "…", ""},
		{"abc", -1, "…", ""},
	} {
		if got := Clip(tt.in, tt.n); got != tt.clip {
			t.Errorf("Clip(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.clip)
		}
		if got := Cut(tt.in, tt.n); got != tt.cut {
			t.Errorf("Cut(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.cut)
		}
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

// CutRunes is string([]rune(s)[:n]), the cut it replaces, for valid and
// invalid UTF-8 alike.
func TestCutRunesMatchesRuneSlice(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "abc", "héllo wörld", "a\xffb\xfec", "\xff\xff\xff", "日本語のテキスト", "é\xc3"} {
		runes := []rune(s)
		for n := -1; n <= len(runes)+1; n++ {
			want := s
			if n <= 0 {
				want = ""
			} else if n < len(runes) {
				want = string(runes[:n])
			}
			if got := CutRunes(s, n); got != want {
				t.Errorf("CutRunes(%q, %d) = %q, want %q", s, n, got, want)
			}
		}
	}
}

func FuzzClip(f *testing.F) {
	for _, s := range []string{"", "abc", "ééé", "a\xffb", "日本語"} {
		f.Add(s, 2)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		n %= 64
		if got := Clip(s, n); len(s) > n && (!strings.HasSuffix(got, Ellipsis) || len(got) > max(n, 0)+len(Ellipsis)) {
			t.Fatalf("Clip(%q, %d) = %q", s, n, got)
		}
		if got := ClipRunes(s, n); utf8.RuneCountInString(got) > max(n, 0) {
			t.Fatalf("ClipRunes(%q, %d) = %q: over %d runes", s, n, got, n)
		}
		if utf8.ValidString(s) && !utf8.ValidString(Cut(s, n)) {
			t.Fatalf("Cut(%q, %d) split a rune", s, n)
		}
	})
}

// oneLineReference is OneLine's definition, which its fast path must match.
func oneLineReference(s string) string { return strings.Join(strings.Fields(s), " ") }

func TestOneLineMatchesFields(t *testing.T) {
	t.Parallel()
	if got := OneLine("  a\n\tb   c \r\n"); got != "a b c" {
		t.Errorf("OneLine = %q, want %q", got, "a b c")
	}
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
