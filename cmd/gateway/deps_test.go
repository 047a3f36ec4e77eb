package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const modulePath = "github.com/twostep/twostep"

// packageRow is one row of docs/design.md §2: the packages it covers and
// the project packages they may import.
type packageRow struct {
	line       int
	packages   []string
	everything bool     // "everything": any project package
	butCmd     bool     // "everything but `cmd/`"
	allowed    []string // otherwise: exactly these
}

var backticked = regexp.MustCompile("`([^`]+)`")

// readPackageTable parses the package table of docs/design.md §2.
func readPackageTable(t *testing.T) []packageRow {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("..", "..", "docs", "design.md"))
	if err != nil {
		t.Fatalf("read the design: %v", err)
	}
	section := string(text)
	start := strings.Index(section, "\n## 2. Packages")
	end := strings.Index(section, "\n## 3.")
	if start < 0 || end < start {
		t.Fatal("docs/design.md has no §2 Packages section before §3")
	}
	var rows []packageRow
	for i, line := range strings.Split(section[start:end], "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 5 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		row := packageRow{line: i}
		for _, m := range backticked.FindAllStringSubmatch(cells[1], -1) {
			row.packages = append(row.packages, strings.TrimSuffix(m[1], "/"))
		}
		may := cells[3]
		switch {
		case strings.Contains(may, "everything but `cmd/`"):
			row.butCmd = true
		case strings.Contains(may, "everything"):
			row.everything = true
		default:
			for _, m := range backticked.FindAllStringSubmatch(may, -1) {
				row.allowed = append(row.allowed, strings.TrimSuffix(m[1], "/"))
			}
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		t.Fatal("docs/design.md §2 has no package rows")
	}
	return rows
}

// projectImports lists every project package (relative to the module)
// with the project packages its non-test files import.
func projectImports(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	rel := func(path string) (string, bool) { return strings.CutPrefix(path, modulePath+"/") }
	imports := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, _ := rel(fields[0])
		imports[pkg] = []string{}
		for _, imp := range fields[1:] {
			if r, ok := rel(imp); ok {
				imports[pkg] = append(imports[pkg], r)
			}
		}
	}
	return imports
}

// TestPackageTable holds the code to docs/design.md §2: every package of
// the module has a row, a row names only real packages, each package
// imports only the project packages its row lists, and a row lists only
// packages below it (the dependency direction the table's title states).
func TestPackageTable(t *testing.T) {
	t.Parallel()
	rows := readPackageTable(t)
	imports := projectImports(t)

	rowOf := map[string]int{}
	for i, row := range rows {
		for _, pkg := range row.packages {
			if _, ok := imports[pkg]; !ok {
				t.Errorf("design §2 names package %s, which does not exist", pkg)
			}
			rowOf[pkg] = i
		}
	}
	for pkg := range imports {
		if _, ok := rowOf[pkg]; !ok {
			t.Errorf("package %s has no row in docs/design.md §2", pkg)
		}
	}
	for i, row := range rows {
		for _, dep := range row.allowed {
			j, ok := rowOf[dep]
			switch {
			case !ok:
				t.Errorf("design §2: %v may import %s, which has no row", row.packages, dep)
			case j <= i:
				t.Errorf("design §2: %v may import %s, which is not below it", row.packages, dep)
			}
		}
		for _, pkg := range row.packages {
			for _, dep := range imports[pkg] {
				switch {
				case row.everything:
				case row.butCmd && !strings.HasPrefix(dep, "cmd/"):
				case slices.Contains(row.allowed, dep):
				default:
					t.Errorf("%s imports %s, which its row in docs/design.md §2 does not allow", pkg, dep)
				}
			}
		}
	}
}

// TestWorkflowImportsNoAdapter: workflow/ imports no gin, no go-redis and
// no langchaingo, not even indirectly (design §2).
func TestWorkflowImportsNoAdapter(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "./workflow")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"github.com/gin-gonic/", "github.com/redis/go-redis/", "github.com/tmc/langchaingo"} {
			if strings.HasPrefix(dep, banned) {
				t.Errorf("workflow depends on %s", dep)
			}
		}
	}
}

// maxGatewayLines bounds cmd/gateway's own code: it adds the subcommands,
// listening, signals and shutdown; what assembles the process belongs in
// wiring/ (design §2).
const maxGatewayLines = 550

// TestGatewayOnlyWires holds cmd/gateway's non-test code to
// maxGatewayLines.
func TestGatewayOnlyWires(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		total += strings.Count(string(b), "\n")
	}
	if total > maxGatewayLines {
		t.Errorf("cmd/gateway has %d lines of code, over %d: move what wires the process into wiring/", total, maxGatewayLines)
	}
}
