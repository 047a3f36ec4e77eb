package redact

import (
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
)

// containsAny is what scan must answer: the definition, needle by needle.
func containsAny(needles []string, text string) bool {
	return slices.ContainsFunc(needles, func(n string) bool { return strings.Contains(text, n) })
}

// checkScan fails t when scan, on text as a string or as bytes, answers
// other than containsAny.
func checkScan(t *testing.T, needles []string, text string) {
	t.Helper()
	checkScanner(t, newScanner(needles), needles, text)
}

func checkScanner(t *testing.T, s *scanner, needles []string, text string) {
	t.Helper()
	want := containsAny(needles, text)
	if got := scan(s, text); got != want {
		t.Fatalf("scan(%q) with needles %q (window %d) = %v, want %v", text, needles, s.window, got, want)
	}
	if got := scan(s, []byte(text)); got != want {
		t.Fatalf("scan([]byte(%q)) with needles %q (window %d) = %v, want %v", text, needles, s.window, got, want)
	}
}

var scanCases = []struct {
	name    string
	needles []string
	text    string
	skip    bool // scanSkip answers (every needle at least minWindow long)
}{
	{"one byte, present", []string{"x", "secret"}, "a x b", false},
	{"one byte, absent", []string{"x", "secret"}, "a b c", false},
	{"one byte, last", []string{"x", "yy"}, "aaax", false},
	{"two bytes, cut at the end", []string{"xy"}, "aaax", false},
	{"short needle at the start", []string{"abcd"}, "abcdzzzzzz", false},
	{"empty text", []string{"secret"}, "", true},
	{"text shorter than the window", []string{"secret"}, "secre", true},
	{"text is the needle", []string{"secret"}, "secret", true},
	{"at the start", []string{"secret", "password-1"}, "secret and more text after it", true},
	{"at the end", []string{"secret", "password-1"}, "text before it ends in password-1", true},
	{"cut at the end", []string{"secret", "password-1"}, "text before it ends in password-", true},
	{"longer than the text", []string{"a-rather-long-secret-value"}, "a-rather-long-secret", true},
	{"prefix of another, only the longer", []string{"secret", "secret-longer"}, "xx secret-longer yy", true},
	{"prefix of another, only the shorter", []string{"secret-longer", "secret"}, "xx secret-long yy", true},
	{"prefix of another, neither", []string{"secret", "secret-longer"}, "xx secre-longer yy", true},
	{"suffix of another, only the shorter", []string{"my-secret", "secret"}, "xx our-secret yy", true},
	{"suffix of another, neither", []string{"my-secret", "secret"}, "xx my-secre yy", true},
	{"repeated bytes, one short", []string{"aaaaaaa"}, "aaaaaa", true},
	{"repeated bytes, at the end", []string{"aaaaaaa"}, "baaaaaabaaaaaaa", true},
	{"repeated bytes, nearly", []string{"aaaaaab"}, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab", true},
	{"window block seen, needle not", []string{"secret-value"}, "xxxx secre-value", true},
	{"long and short needles", []string{"short", strings.Repeat("long-", 40)}, "x " + strings.Repeat("long-", 40), true},
	{"needle longer than the widest window, at the end", []string{strings.Repeat("0123456789", 30)}, "x" + strings.Repeat("0123456789", 30), true},
	{"needle longer than the widest window, cut", []string{strings.Repeat("0123456789", 30)}, "x" + strings.Repeat("0123456789", 30)[:299], true},
	{"high bytes", []string{"\xff\xfe\xfd\xfc\xfb", "naïve-секрет"}, "ab naïve-секрет", true},
	{"high bytes, absent", []string{"\xff\xfe\xfd\xfc\xfb", "naïve-секрет"}, "\xff\xfe\xfd\xfc\xfa naïve-секре", true},
	{"escaped form", []string{`\u0073\u006b\u002d`}, `"\u0073\u006b\u002c" and \u0073\u006b\u002d`, true},
}

// TestScan: the edge cases of both scans; each case is also a fuzz seed.
func TestScan(t *testing.T) {
	t.Parallel()
	for _, tc := range scanCases {
		t.Run(tc.name, func(t *testing.T) {
			if skip := newScanner(tc.needles).shift != nil; skip != tc.skip {
				t.Fatalf("skip scan %v, want %v: the case does not test what it says", skip, tc.skip)
			}
			checkScan(t, tc.needles, tc.text)
		})
	}
}

// TestScanRandom: random needle sets over a two- or three-letter alphabet
// (needles that overlap, repeat a byte and are prefixes and suffixes of
// each other, often found and often nearly found) on random texts,
// through both scans.
func TestScanRandom(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(20, 5))
	word := func(alphabet string, n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	var skipped, found int
	for range 6000 {
		alphabet := []string{"ab", "abc", "a\xff"}[rng.IntN(3)]
		shortest := 1 + rng.IntN(9)
		needles := make([]string, 1+rng.IntN(6))
		for i := range needles {
			needles[i] = word(alphabet, shortest+rng.IntN(6))
		}
		s := newScanner(needles)
		if s.shift != nil {
			skipped++
		}
		for range 5 {
			text := word(alphabet, rng.IntN(40))
			if containsAny(needles, text) {
				found++
			}
			checkScanner(t, s, needles, text)
		}
	}
	if skipped < 2000 || found < 5000 || found > 25000 {
		t.Fatalf("%d of 6000 needle sets skip, %d of 30000 texts hold a needle: the test does not exercise both scans and both answers", skipped, found)
	}
}

// encodeNeedles writes needles (1 to 256 bytes each) for FuzzScan: each
// one's length less one in a byte, then the needle.
func encodeNeedles(needles []string) string {
	var b strings.Builder
	for _, n := range needles {
		b.WriteByte(byte(len(n) - 1))
		b.WriteString(n)
	}
	return b.String()
}

// decodeNeedles reads encodeNeedles's format; a needle cut by the end of
// the input is kept as far as it goes.
func decodeNeedles(s string) []string {
	var needles []string
	for len(s) > 1 {
		n := min(int(s[0])+1, len(s)-1)
		needles = append(needles, s[1:1+n])
		s = s[1+n:]
	}
	return needles
}

// FuzzScan compares scan with containsAny on any needle set and text.
// Plain go test runs the seeds: TestScan's cases and a few shapes of
// Redactor needles in a Stage 1 prompt.
func FuzzScan(f *testing.F) {
	for _, tc := range scanCases {
		if !slices.ContainsFunc(tc.needles, func(n string) bool { return len(n) > 256 }) {
			f.Add(encodeNeedles(tc.needles), tc.text)
		}
	}
	prompt, err := os.ReadFile("testdata/stage1_step100.txt")
	if err != nil {
		f.Fatal(err)
	}
	for _, secrets := range [][]string{{"sk-bench-4f3c2a1b9e8d7c6b5a49382716"}, {"secret-value", "tag=8"}} {
		needles := New(secrets...).needles
		f.Add(encodeNeedles(needles), string(prompt[:2000]))
		f.Add(encodeNeedles(needles), string(prompt[:1000])+Forms(secrets[0])[2]+string(prompt[1000:1500]))
		f.Add(encodeNeedles(needles), string(prompt[:1000])+needles[0])
	}
	f.Fuzz(func(t *testing.T, encoded, text string) {
		needles := decodeNeedles(encoded)
		if len(needles) == 0 {
			return
		}
		checkScan(t, needles, text)
	})
}
