package redact

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/twostep/twostep/workflow"
)

// TestContainsMatchesEveryForm: the one-pass pre-check looking for the
// needles only says what looking for every form of every secret says, on
// random texts made of pieces of the forms (whole, cut short, overlapping,
// next to each other) and plain bytes; one-byte and padded base64 forms
// included.
func TestContainsMatchesEveryForm(t *testing.T) {
	t.Parallel()
	secrets := []string{"a", "pa\"ss<word>&1", "sk-live-123456", "sk-live-123456-extended", "naïve-секрет-9", "ab/cd+ef=="}
	r := New(secrets...)
	var forms []string
	for _, s := range secrets {
		forms = append(forms, Forms(s)...)
	}
	rng := rand.New(rand.NewPCG(7, 20))
	found := 0
	for trial := range 20000 {
		var b strings.Builder
		for range 1 + rng.IntN(4) {
			f := forms[rng.IntN(len(forms))]
			switch rng.IntN(4) {
			case 0:
				b.WriteString(f)
			case 1:
				b.WriteString(f[:rng.IntN(len(f)+1)])
			case 2:
				b.WriteString(f[rng.IntN(len(f)+1):])
			default:
				b.WriteString("\\u00xyz sk- YQ bcd"[rng.IntN(17):])
			}
		}
		text := strings.ReplaceAll(b.String(), "a", []string{"a", "b"}[rng.IntN(2)])
		want := false
		for _, f := range forms {
			want = want || strings.Contains(lowerASCII(text), lowerASCII(f)) // the scan folds ASCII case
		}
		if got := scan(r.scan, text); got != want {
			t.Fatalf("trial %d: scan(%q) = %v, want %v", trial, text, got, want)
		}
		if got := scan(r.scan, []byte(text)); got != want {
			t.Fatalf("trial %d: scan([]byte(%q)) = %v, want %v", trial, text, got, want)
		}
		if want && !r.Contains(text) {
			t.Fatalf("trial %d: Contains(%q) = false, want true", trial, text)
		}
		if want {
			found++
		}
	}
	if found < 2000 || found > 18000 {
		t.Fatalf("%d of 20000 texts held a secret: the test does not exercise both answers", found)
	}
}

// TestTraceRedactsEveryFormInEveryField: each form of each secret, put in
// any one field of a trace (a prompt message after a clean one, the
// response, the parsed JSON, the error), is redacted there, and the other
// fields are passed as they were, without a copy.
func TestTraceRedactsEveryFormInEveryField(t *testing.T) {
	t.Parallel()
	secrets := []string{"pa\"ss<word>&1", "tok-ABCDEFGH-1234/x", "naïve-секрет-9"}
	r := New(secrets...)
	for _, s := range secrets {
		for _, f := range Forms(s) {
			for field := range 4 {
				in := workflow.Trace{ID: "tr_1",
					Prompt:   []workflow.PromptMessage{{Role: "system", Content: "clean"}, {Role: "user", Content: "clean"}},
					Response: "clean", Parsed: []byte(`{"k":"clean"}`), Error: "clean"}
				dirty := "x " + f + " y"
				switch field {
				case 0:
					in.Prompt = []workflow.PromptMessage{in.Prompt[0], {Role: "user", Content: dirty}}
				case 1:
					in.Response = dirty
				case 2:
					in.Parsed = []byte(`{"k":"` + dirty + `"}`)
				case 3:
					in.Error = dirty
				}
				got, changed := r.trace(in)
				all := got.Prompt[0].Content + got.Prompt[1].Content + got.Response + string(got.Parsed) + got.Error
				if !changed || strings.Contains(all, f) || !strings.Contains(all, Redacted) {
					t.Errorf("form %q in field %d: changed %v, trace %+v", f, field, changed, got)
				}
				if field != 0 && &got.Prompt[0] != &in.Prompt[0] {
					t.Errorf("form %q in field %d: the clean prompt was copied", f, field)
				}
				if field != 2 && &got.Parsed[0] != &in.Parsed[0] {
					t.Errorf("form %q in field %d: the clean parsed JSON was copied", f, field)
				}
				if field == 0 && in.Prompt[1].Content != dirty {
					t.Errorf("form %q: the caller's prompt was changed", f)
				}
			}
		}
	}
	clean := workflow.Trace{Prompt: []workflow.PromptMessage{{Content: "clean"}}, Response: "r", Parsed: []byte(`{}`)}
	if _, changed := r.trace(clean); changed {
		t.Error("a trace holding no secret was reported changed")
	}
}

// BenchmarkScan: both scans on testdata/stage1_step100.txt (about 20 kB,
// no needle in it) with the needles of the bench gateway's model key and
// with four needles of 4, 5, 8 and 16 bytes, made of bytes rare in the
// prompt (few positions pass scanBytes's first-byte test) or common in it;
// minWindow is chosen by it.
func BenchmarkScan(b *testing.B) {
	prompt, err := os.ReadFile("testdata/stage1_step100.txt")
	if err != nil {
		b.Fatal(err)
	}
	text := string(prompt)
	type needleSet struct {
		name    string
		needles []string
	}
	sets := []needleSet{{"key", New("sk-bench-4f3c2a1b9e8d7c6b5a49382716").needles}}
	for _, n := range []int{4, 5, 8, 16} {
		for _, bytes := range []struct{ name, start, rest string }{
			{"rare", "Zq#9", "!xQ~Zq#9!xQ~Zq#9!xQ~"},
			{"common", "tesn", "ecretpassword-value-of"},
		} {
			var needles []string
			for k := range 4 {
				needles = append(needles, (bytes.start[k:] + bytes.rest)[:n])
			}
			sets = append(sets, needleSet{fmt.Sprintf("%s%d", bytes.name, n), needles})
		}
	}
	for _, set := range sets {
		if containsAny(set.needles, text) {
			b.Fatalf("the prompt holds one of %q", set.needles)
		}
		s := newScannerSkipping(set.needles, 2, false) // both scans can run on it
		for _, sc := range []struct {
			name string
			scan func(*scanner, string) bool
		}{{"bytes", scanBytes[string]}, {"skip", scanSkip[string]}} {
			b.Run("needles="+set.name+"/scan="+sc.name, func(b *testing.B) {
				b.SetBytes(int64(len(text)))
				for b.Loop() {
					sc.scan(s, text)
				}
			})
		}
	}
}
