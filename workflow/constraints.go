package workflow

import (
	"encoding/json"
	"maps"
	"slices"
)

// NarrowSpec returns spec with each constrained property's schema narrowed
// by its constraint (DESIGN §10.4): the fragment's keywords are merged into
// the property's schema, the fragment's winning where both name one. Stage
// 2 is rendered from the narrowed spec, so PARAMETERS_SCHEMA and the native
// output schema show the constraints; the reply is still validated against
// the action's own schema and, apart, against each constraint (so a
// fragment looser than the action's schema loosens nothing). A spec whose
// schema does not decode, or no constraint, is returned as it is.
func NarrowSpec(spec ActionSpec, constraints map[string]any) ActionSpec {
	if len(constraints) == 0 {
		return spec
	}
	var doc map[string]any
	if json.Unmarshal(spec.Parameters, &doc) != nil || doc == nil {
		return spec
	}
	props, _ := doc["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
	}
	props = maps.Clone(props)
	for _, name := range slices.Sorted(maps.Keys(constraints)) {
		frag, ok := constraints[name].(map[string]any)
		if !ok {
			continue
		}
		merged, _ := props[name].(map[string]any)
		merged = maps.Clone(merged)
		if merged == nil {
			merged = map[string]any{}
		}
		maps.Copy(merged, frag)
		props[name] = merged
	}
	doc["properties"] = props
	raw, err := json.Marshal(doc)
	if err != nil {
		return spec
	}
	spec.Parameters = raw
	return spec
}
