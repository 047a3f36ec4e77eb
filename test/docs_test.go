package test

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/twostep/twostep/wiring"
)

// readmeMaxLines is the README's budget (issue 35): what twostep is, the
// two commands, configuration essentials, the API in a table, links into
// docs/. Detail belongs in docs/.
const readmeMaxLines = 300

// TestREADMEIsShort: the README stays a front page.
func TestREADMEIsShort(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, more than %d: move the detail into docs/", n, readmeMaxLines)
	}
}

// TestEveryVariableDocumented: every environment variable the gateway
// reads (an env tag of wiring.Config) is in the README's table and in
// docs/configuration.md, the full reference.
func TestEveryVariableDocumented(t *testing.T) {
	t.Parallel()
	var vars []string
	ct := reflect.TypeFor[wiring.Config]()
	for i := range ct.NumField() {
		if tag := ct.Field(i).Tag.Get("env"); tag != "" && tag != "-" {
			vars = append(vars, strings.Split(tag, ",")[0])
		}
	}
	if len(vars) < 10 {
		t.Fatalf("found only %d env tags on wiring.Config: %v", len(vars), vars)
	}
	for _, doc := range []string{"../README.md", "../docs/configuration.md"} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vars {
			if !strings.Contains(string(b), "`"+v+"`") {
				t.Errorf("%s does not document %s", doc, v)
			}
		}
	}
}

// TestDocLinksResolve: every relative link in the README, SECURITY.md,
// docs/ and bench/README.md names a file that exists and, with a
// #fragment into a Markdown file, a heading of that file — so moving a
// section leaves no dangling link.
func TestDocLinksResolve(t *testing.T) {
	t.Parallel()
	docs, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	docs = append(docs, "../README.md", "../SECURITY.md", "../bench/README.md")
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	checked := 0
	for _, doc := range docs {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(withoutCode(string(b)), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			path := doc
			if file != "" {
				path = filepath.Join(filepath.Dir(doc), file)
			}
			checked++
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s links to %s: %v", doc, target, err)
				continue
			}
			if frag == "" || !strings.HasSuffix(path, ".md") {
				continue
			}
			if !anchors(t, path)[frag] {
				t.Errorf("%s links to %s: %s has no heading #%s", doc, target, path, frag)
			}
		}
	}
	if checked < 20 {
		t.Fatalf("checked only %d links: the link pattern no longer matches", checked)
	}
}

// TestAnchorSlugs pins the heading-to-anchor rule the link check uses
// (GitHub's): lower case, punctuation dropped, spaces to hyphens.
func TestAnchorSlugs(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ heading, want string }{
		{"Scaling the store", "scaling-the-store"},
		{"Package map and one step's path", "package-map-and-one-steps-path"},
		{"A new round while one runs: `onBusy`", "a-new-round-while-one-runs-onbusy"},
		{"The offline model (`LLM_PROVIDER=scripted`)", "the-offline-model-llm_providerscripted"},
		{"Operations: API and worker instances, dispatch", "operations-api-and-worker-instances-dispatch"},
	} {
		if got := slug(c.heading); got != c.want {
			t.Errorf("slug(%q) = %q, want %q", c.heading, got, c.want)
		}
	}
}

// anchors is the set of heading anchors of a Markdown file.
func anchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for line := range strings.SplitSeq(withoutCode(string(b)), "\n") {
		if h := strings.TrimLeft(line, "#"); h != line && strings.HasPrefix(h, " ") {
			s := slug(h)
			for i := 1; out[s]; i++ { // GitHub numbers repeated headings
				s = slug(h) + "-" + string(rune('0'+i))
			}
			out[s] = true
		}
	}
	return out
}

// slug is GitHub's anchor for a heading's text.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// withoutCode blanks fenced code blocks, whose lines are neither links
// nor headings.
func withoutCode(md string) string {
	lines := strings.Split(md, "\n")
	in := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			in = !in
			lines[i] = ""
			continue
		}
		if in {
			lines[i] = ""
		}
	}
	return strings.Join(lines, "\n")
}
