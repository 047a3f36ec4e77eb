package prompts

import (
	"encoding/json"
	"slices"

	"github.com/twostep/twostep/workflow"
)

// Stage1HeadKeys are the keys of a Stage 1 reply Stage 2 is rendered
// from, in the order the reply is asked to write them first (DESIGN
// §11.2): once a streamed reply holds them complete, Stage 2 may start.
var Stage1HeadKeys = []string{"actionObjective", "action", "parametersContext", "parametersSchema"}

// IsStage1HeadKey reports whether key is one of Stage1HeadKeys.
func IsStage1HeadKey(key string) bool { return slices.Contains(Stage1HeadKeys, key) }

// CheckStage1Head checks the head of a streamed Stage 1 reply — the
// values of Stage1HeadKeys, raw — by the rules of ParseStage1 that apply
// to them alone: a string naming a registered action, an objective that
// is text, and fields of allowed types and names, a field named alone
// being one the action registers. It returns the selection those values
// make (the rest empty) and its problems; the whole reply is still
// parsed by ParseStage1, which applies every rule.
func CheckStage1Head(head map[string]json.RawMessage, reg workflow.Registry) (workflow.Selection, []string) {
	obj := make(rawObject, 0, len(Stage1HeadKeys))
	for _, k := range Stage1HeadKeys {
		if v, ok := head[k]; ok {
			obj = append(obj, rawMember{key: k, value: v})
		}
	}
	p := &problems{}
	var sel workflow.Selection
	spec, known := parseAction(obj, reg, &sel, p)
	sel.ActionObjective = textMember(obj, "actionObjective", p)
	sel.ParametersContext = contextMember(obj)
	schema, _ := obj.get("parametersSchema")
	types := newFieldTypes(spec, known)
	sel.ParametersSchema.Fields = parseFields(schema, types, p)
	resolveNamedFields(sel.ParametersSchema.Fields, types, p)
	return sel, p.lines
}
