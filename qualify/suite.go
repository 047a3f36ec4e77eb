package qualify

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/twostep/twostep/workflow"
)

// builtin holds the embedded suite: the shared catalogues and the cases
// of each stage, reviewed like code.
//
//go:embed catalogues.json cases/*.jsonl
var builtin embed.FS

// Suite is a loaded set of cases, each with the catalogue its replies are
// checked against.
type Suite struct {
	Cases []Prepared
}

// Prepared is a case ready to run: its catalogue compiled and its
// messages filled in as a store holds them.
type Prepared struct {
	Case
	Catalogue *Catalogue
	msgs      []workflow.Message
}

// Builtin loads the embedded suite.
func Builtin() (Suite, error) {
	cats, err := builtinCatalogues()
	if err != nil {
		return Suite{}, err
	}
	files, err := fs.Glob(builtin, "cases/*.jsonl")
	if err != nil {
		return Suite{}, err
	}
	var cases []Case
	for _, f := range files {
		data, err := builtin.ReadFile(f)
		if err != nil {
			return Suite{}, err
		}
		cs, err := ParseCases(bytes.NewReader(data))
		if err != nil {
			return Suite{}, fmt.Errorf("%s: %w", f, err)
		}
		cases = append(cases, cs...)
	}
	return Prepare(cases, cats)
}

// Load prepares cases read from a user's file against the embedded
// catalogues (a case may name one, or carry its own actions).
func Load(cases []Case) (Suite, error) {
	cats, err := builtinCatalogues()
	if err != nil {
		return Suite{}, err
	}
	return Prepare(cases, cats)
}

func builtinCatalogues() (map[string]catalogueSource, error) {
	data, err := builtin.ReadFile("catalogues.json")
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var cats map[string]catalogueSource
	if err := dec.Decode(&cats); err != nil {
		return nil, fmt.Errorf("catalogues.json: %w", err)
	}
	return cats, nil
}

// Prepare compiles each case's catalogue (cats[c.Catalogue] with the
// case's own actions and connections) and checks the case; every problem
// of every case is reported at once, each naming its case.
func Prepare(cases []Case, cats map[string]catalogueSource) (Suite, error) {
	var s Suite
	var problems []string
	seen := map[string]bool{}
	for i, c := range cases {
		name := c.ID
		if name == "" {
			name = fmt.Sprintf("#%d", i+1)
		}
		if seen[c.ID] && c.ID != "" {
			problems = append(problems, fmt.Sprintf("case %s: the id is used twice", name))
		}
		seen[c.ID] = true
		cat, err := catalogueOf(c, cats)
		if err != nil {
			problems = append(problems, fmt.Sprintf("case %s: %s", name, workflow.PublicMessage(err)))
			continue
		}
		for _, p := range c.Problems(*cat) {
			problems = append(problems, fmt.Sprintf("case %s: %s", name, p))
		}
		s.Cases = append(s.Cases, Prepared{Case: c, Catalogue: cat, msgs: c.messages()})
	}
	if len(problems) > 0 {
		return Suite{}, workflow.Errorf(workflow.KindInvalid, "the cases are not usable:\n  - %s", strings.Join(problems, "\n  - "))
	}
	if len(s.Cases) == 0 {
		return Suite{}, workflow.Errorf(workflow.KindInvalid, "there are no cases")
	}
	return s, nil
}

// catalogueOf builds c's catalogue.
func catalogueOf(c Case, cats map[string]catalogueSource) (*Catalogue, error) {
	var src catalogueSource
	if c.Catalogue != "" {
		var ok bool
		if src, ok = cats[c.Catalogue]; !ok {
			return nil, workflow.Errorf(workflow.KindInvalid, "catalogue %q does not exist", c.Catalogue)
		}
	}
	specs := slices.DeleteFunc(slices.Clone(src.Actions), func(s workflow.ActionSpec) bool {
		return slices.ContainsFunc(c.Actions, func(o workflow.ActionSpec) bool { return o.Name == s.Name })
	})
	specs = append(specs, c.Actions...)
	conns := src.Connections
	if c.Connections != nil {
		conns = c.Connections
	}
	return NewCatalogue(specs, conns)
}

// Stage returns the cases of stage, in suite order.
func (s Suite) Stage(stage workflow.Stage) []Prepared {
	var out []Prepared
	for _, c := range s.Cases {
		if c.Stage == stage {
			out = append(out, c)
		}
	}
	return out
}

// ReadFile loads a suite from a JSON Lines file (ParseCases, then Load).
func ReadFile(path string) (Suite, error) {
	f, err := os.Open(path)
	if err != nil {
		return Suite{}, workflow.Errorf(workflow.KindInvalid, "%v", err)
	}
	defer f.Close()
	cases, err := ParseCases(f)
	if err != nil {
		return Suite{}, fmt.Errorf("%s: %w", path, err)
	}
	s, err := Load(cases)
	if err != nil {
		return Suite{}, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}
