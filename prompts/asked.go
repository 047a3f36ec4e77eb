package prompts

import (
	"fmt"
	"slices"
	"strings"

	"github.com/twostep/twostep/placeholders"
	"github.com/twostep/twostep/workflow"
)

// CheckAskedFields returns one "parameters.<key>: ..." problem, in key
// order, for every parameter key outside the fields Stage 2 may fill: the
// ones Stage 1 asked for (asked) plus every field the action requires, as
// placeholders.StageTwoFields computes them. A registered parameter Stage 1
// did not ask for is such a key. Forbidden keys (workflow.IsForbiddenField)
// are left to the caller, which reports them with their own message. The
// check is the same wherever parameters arrive (a Stage 2 reply, edited
// parameters of an approval); nil means every key is allowed.
func CheckAskedFields(params map[string]any, action workflow.ActionSpec, asked []workflow.FieldSpec) []string {
	return checkAskedFields(nil, params, action, asked)
}

// CheckAskedFields is the package-level CheckAskedFields, from the
// builder's memoized Stage 2 cut of the action's schema.
func (b *Builder) CheckAskedFields(params map[string]any, action workflow.ActionSpec, asked []workflow.FieldSpec) []string {
	return checkAskedFields(b.placeholders, params, action, asked)
}

// checkAskedFields is CheckAskedFields, memoized in c (nil: not).
func checkAskedFields(c *placeholders.Cache, params map[string]any, action workflow.ActionSpec, asked []workflow.FieldSpec) []string {
	allowed, err := c.StageTwoFields(action, asked)
	if err != nil {
		return []string{workflow.PublicMessage(err)}
	}
	var keys []string // usually none: no allocation
	for k := range params {
		if !slices.Contains(allowed, k) && !workflow.IsForbiddenField(k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []string
	for _, k := range keys {
		out = append(out, fmt.Sprintf("parameters.%s: not a field to fill: give only %s", k, fieldList(allowed)))
	}
	return out
}

// NeedsStage2 reports whether a step of action after Stage 1 asked for
// fields has any parameter for Stage 2 to fill (placeholders.StageTwoFields
// is not empty). A schema that cannot be read needs Stage 2, whose call
// reports it.
func NeedsStage2(action workflow.ActionSpec, asked []workflow.FieldSpec) bool {
	return needsStage2(nil, action, asked)
}

// NeedsStage2 is the package-level NeedsStage2, from the builder's
// memoized Stage 2 cut of the action's schema.
func (b *Builder) NeedsStage2(action workflow.ActionSpec, asked []workflow.FieldSpec) bool {
	return needsStage2(b.placeholders, action, asked)
}

// needsStage2 is NeedsStage2, memoized in c (nil: not).
func needsStage2(c *placeholders.Cache, action workflow.ActionSpec, asked []workflow.FieldSpec) bool {
	names, err := c.StageTwoFields(action, asked)
	return err != nil || len(names) > 0
}

// ParseStage2 is the package-level ParseStage2, from the builder's
// memoized Stage 2 cut of the action's schema.
func (b *Builder) ParseStage2(reply string, action workflow.ActionSpec, asked []workflow.FieldSpec, reg workflow.Registry) Stage2Result {
	return parseStage2(b.placeholders, reply, action, asked, reg)
}

// fieldList names the allowed fields for a feedback line.
func fieldList(allowed []string) string {
	if len(allowed) == 0 {
		return "an empty parameters object"
	}
	return "the fields " + strings.Join(allowed, ", ")
}
