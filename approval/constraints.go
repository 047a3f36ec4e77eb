package approval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/twostep/twostep/workflow"
)

// maxConstraintBytes bounds one constraint fragment's JSON.
const maxConstraintBytes = 16 << 10

// ConstraintFragmentProblems returns one "<field>: message" line per
// constraint (DESIGN §10.4) that is not a JSON Schema object that compiles
// (no external reference, at most 16 KiB), sorted by field.
func (a *Policy) ConstraintFragmentProblems(constraints map[string]any) []string {
	var lines []string
	for _, name := range slices.Sorted(maps.Keys(constraints)) {
		if _, err := compileConstraint(name, constraints[name]); err != nil {
			lines = append(lines, fmt.Sprintf("%s: %v", name, err))
		}
	}
	return lines
}

// ConstraintProblems returns one "/<field>: message" line per value of
// params that its field's constraint rejects; a field params leaves out is
// not judged (the action's schema says whether it is required), nor is a
// constraint that does not compile (ConstraintFragmentProblems refuses it
// before it is stored).
func (a *Policy) ConstraintProblems(constraints, params map[string]any) []string {
	norm, err := workflow.NormalizeParams(params)
	if err != nil {
		return []string{"/: parameters cannot be written as JSON: " + err.Error()}
	}
	var lines []string
	for _, name := range slices.Sorted(maps.Keys(constraints)) {
		v, ok := norm[name]
		if !ok {
			continue
		}
		s, err := compileConstraint(name, constraints[name])
		if err != nil {
			continue
		}
		if err := s.Validate(v); err != nil {
			lines = append(lines, fmt.Sprintf("/%s: %s (the approved constraint is %s)", name, constraintMessage(err), fragmentText(constraints[name])))
		}
	}
	return lines
}

// compileConstraint compiles one field's fragment as a Draft 2020-12
// schema that may not load anything.
func compileConstraint(name string, frag any) (*jsonschema.Schema, error) {
	obj, ok := frag.(map[string]any)
	if !ok {
		return nil, errors.New("must be a JSON Schema object, such as {\"maximum\": 2} or {\"enum\": [\"a\", \"b\"]}")
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("cannot be written as JSON: %w", err)
	}
	if len(raw) > maxConstraintBytes {
		return nil, fmt.Errorf("is %d bytes, more than %d", len(raw), maxConstraintBytes)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	u := "mem:///constraints/" + url.PathEscape(name) + ".json"
	if err := c.AddResource(u, doc); err != nil {
		return nil, err
	}
	s, err := c.Compile(u)
	if err != nil {
		return nil, fmt.Errorf("does not compile: %v", err)
	}
	return s, nil
}

// constraintMessage is the first reason a validation error gives.
func constraintMessage(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	return ve.ErrorKind.LocalizedString(message.NewPrinter(language.English))
}

// fragmentText is a fragment's JSON, for a message.
func fragmentText(frag any) string {
	b, err := json.Marshal(frag)
	if err != nil {
		return "?"
	}
	return string(b)
}

// noLoader refuses every $ref outside the fragment itself, so a constraint
// can never make the gateway read a file or fetch a URL.
type noLoader struct{}

// Load refuses url.
func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external schema references are not allowed (%s)", url)
}
