package prompts

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/twostep/twostep/placeholders"
	"github.com/twostep/twostep/workflow"
)

// Stage2Output is the native output schema of a Stage 2 reply,
// {"schema": "parameters_v1", "parameters": {...}}, with the parameters
// limited to the fields Stage 2 may fill (placeholders.StageTwoFields: the
// action's required ones and those Stage 1 asked for) and no other key.
type Stage2Output struct {
	// Output is the schema sent to the provider. When Output.Strict, it is
	// in OpenAI's strict-mode form: every parameter required, the optional
	// ones nullable, additionalProperties false on every object. Otherwise
	// it is the plain schema PARAMETERS_SCHEMA shows (optional parameters
	// simply not required) and Output.NotStrict names the construct strict
	// mode cannot take.
	Output workflow.OutputSchema
	// plain is the plain parameters schema, which FromNative walks.
	plain map[string]any
}

// NewStage2Output builds the Stage 2 output schema for action after Stage
// 1 asked for fields. It fails only when the action's registered schema is
// not a JSON object.
func NewStage2Output(action workflow.ActionSpec, asked []workflow.FieldSpec) (Stage2Output, error) {
	text, names, err := placeholders.StageTwoSchemaFields(action, asked)
	if err != nil {
		return Stage2Output{}, err
	}
	return stage2Output(action, text, names)
}

// stage2Output builds the output schema from PARAMETERS_SCHEMA's text and
// the names it shows, in order.
func stage2Output(action workflow.ActionSpec, text string, names []string) (Stage2Output, error) {
	var plain map[string]any
	if err := json.Unmarshal([]byte(text), &plain); err != nil {
		return Stage2Output{}, workflow.WrapKind(workflow.KindInternal, err, "action %s: Stage 2 schema", action.Name)
	}
	out := workflow.OutputSchema{
		Name:        Stage2SchemaName,
		Description: fmt.Sprintf("Fill the business parameters of %s for this step.", action.Name),
	}
	params, reason := strictParameters(plain, names)
	if reason == "" {
		out.Strict = true
	} else {
		out.NotStrict = fmt.Sprintf("action %s: %s", action.Name, reason)
		params = orderedProperties(plain, names)
	}
	envelope := closedObject(
		member{"schema", object{{"type", "string"}, {"enum", []string{ParametersSchemaID}}}},
		member{"parameters", params},
	)
	return Stage2Output{Output: withSchema(out, envelope), plain: plain}, nil
}

// FromNative maps a reply given in a native mode back to the form
// ParseStage2 validates: each null the strict schema let the model write
// for an optional parameter (one the plain schema neither requires nor
// lets be null), at any depth, is dropped, as if the model had left the
// field out. Anything else — a reply that does not decode, a null for a
// required field — is left for ParseStage2 to reject.
func (s Stage2Output) FromNative(reply string) string {
	dec := json.NewDecoder(bytes.NewReader([]byte(reply)))
	dec.UseNumber()
	var obj map[string]any
	if dec.Decode(&obj) != nil || obj == nil {
		return reply
	}
	params, ok := obj["parameters"].(map[string]any)
	if !ok || !dropOptionalNulls(params, s.plain) {
		return reply
	}
	b, err := marshal(obj)
	if err != nil {
		return reply
	}
	return string(b)
}

// dropOptionalNulls deletes from v the null members the schema does not
// require and does not allow to be null, recursing into members and list
// items; it reports whether it deleted any.
func dropOptionalNulls(v map[string]any, schema map[string]any) bool {
	props, _ := schema["properties"].(map[string]any)
	required := stringSet(schema["required"])
	changed := false
	for k, val := range v {
		sub, _ := props[k].(map[string]any)
		if val == nil {
			if !required[k] && !allowsNull(sub) {
				delete(v, k)
				changed = true
			}
			continue
		}
		changed = dropNested(val, sub) || changed
	}
	return changed
}

func dropNested(val any, schema map[string]any) bool {
	switch x := val.(type) {
	case map[string]any:
		return dropOptionalNulls(x, schema)
	case []any:
		items, _ := schema["items"].(map[string]any)
		changed := false
		for _, it := range x {
			changed = dropNested(it, items) || changed
		}
		return changed
	}
	return false
}

// allowsNull reports whether schema itself admits null (its type or enum
// names it), so a null there is the model's answer, not an omission.
func allowsNull(schema map[string]any) bool {
	if schema == nil {
		return false
	}
	if slices.Contains(typeList(schema["type"]), "null") {
		return true
	}
	if enum, ok := schema["enum"].([]any); ok && slices.Contains(enum, nil) {
		return true
	}
	return false
}

func stringSet(v any) map[string]bool {
	out := map[string]bool{}
	list, _ := v.([]any)
	for _, s := range list {
		if str, ok := s.(string); ok {
			out[str] = true
		}
	}
	return out
}

// typeList returns a schema's "type" as a list ("string" or ["string", "null"]).
func typeList(v any) []string {
	switch t := v.(type) {
	case string:
		return []string{t}
	case []string:
		return t
	case []any:
		var out []string
		for _, x := range t {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// orderedProperties is the plain parameters schema with its properties in
// the order of names (the order PARAMETERS_SCHEMA shows).
func orderedProperties(plain map[string]any, names []string) object {
	props, _ := plain["properties"].(map[string]any)
	ordered := make(object, 0, len(names))
	for _, n := range names {
		ordered = append(ordered, member{n, props[n]})
	}
	out := object{{"type", "object"}, {"properties", ordered}}
	if req, ok := plain["required"]; ok {
		out = append(out, member{"required", req})
	}
	if ap, ok := plain["additionalProperties"]; ok {
		out = append(out, member{"additionalProperties", ap})
	}
	return out
}

// strictParameters returns the parameters object in strict-mode form, or
// the reason it has none.
func strictParameters(plain map[string]any, names []string) (object, string) {
	props, _ := plain["properties"].(map[string]any)
	required := stringSet(plain["required"])
	ordered := make(object, 0, len(names))
	for _, n := range names {
		sub, _ := props[n].(map[string]any)
		s, reason := strictSchema("parameters."+n, sub)
		if reason != "" {
			return nil, reason
		}
		if !required[n] {
			s = nullable(s)
		}
		ordered = append(ordered, member{n, s})
	}
	return object{{"type", "object"}, {"properties", ordered}, {"required", names}, {"additionalProperties", false}}, ""
}

// Keywords of a parameter schema in strict mode: kept as they are, or
// dropped because strict mode does not take them though they only annotate
// or bound a value (the action's schema still validates every reply).
var (
	strictKept = []string{"type", "description", "enum", "const", "pattern",
		"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems"}
	strictDropped = []string{"title", "default", "examples", "$comment", "minLength", "maxLength",
		"uniqueItems", "minProperties", "maxProperties", "readOnly", "writeOnly", "deprecated", "$schema"}
	// strictFormats are the string formats strict mode takes; another
	// format is dropped like a bound.
	strictFormats = []any{"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)

// strictSchema converts one parameter schema to strict-mode form, or
// returns why it cannot: a keyword strict mode does not take (oneOf,
// allOf, not, patternProperties, $ref, ...), no type, an object with no
// declared properties (a free-form map) or one that allows other keys.
func strictSchema(path string, s map[string]any) (map[string]any, string) {
	if s == nil {
		return nil, path + " has no schema"
	}
	out := map[string]any{}
	for _, k := range slices.Sorted(maps.Keys(s)) {
		v := s[k]
		switch {
		case slices.Contains(strictKept, k):
			out[k] = v
		case k == "format":
			if slices.Contains(strictFormats, v) {
				out[k] = v
			}
		case slices.Contains(strictDropped, k), k == "properties", k == "required", k == "additionalProperties":
		case k == "items":
			items, ok := v.(map[string]any)
			if !ok {
				return nil, path + `: "items" is not a single schema`
			}
			sub, reason := strictSchema(path+"[]", items)
			if reason != "" {
				return nil, reason
			}
			out[k] = sub
		case k == "anyOf":
			branches, _ := v.([]any)
			var list []any
			for i, b := range branches {
				m, _ := b.(map[string]any)
				sub, reason := strictSchema(fmt.Sprintf("%s.anyOf[%d]", path, i), m)
				if reason != "" {
					return nil, reason
				}
				list = append(list, sub)
			}
			out[k] = list
		default:
			return nil, fmt.Sprintf("%s uses %q, which strict mode does not take", path, k)
		}
	}
	types := typeList(s["type"])
	if len(types) == 0 && s["anyOf"] == nil && s["enum"] == nil && s["const"] == nil {
		return nil, path + " has no type"
	}
	if slices.Contains(types, "object") {
		return strictObject(path, s, out)
	}
	return out, ""
}

// strictObject adds the properties of an object schema in strict form:
// every one required, the optional ones nullable, no other key.
func strictObject(path string, s, out map[string]any) (map[string]any, string) {
	props, _ := s["properties"].(map[string]any)
	if len(props) == 0 {
		return nil, path + " is an object with no declared properties (a free-form map)"
	}
	if ap, ok := s["additionalProperties"]; ok && ap != false {
		return nil, path + " allows additional properties"
	}
	required := stringSet(s["required"])
	names := slices.Sorted(maps.Keys(props))
	strictProps := map[string]any{}
	for _, n := range names {
		sub, _ := props[n].(map[string]any)
		c, reason := strictSchema(path+"."+n, sub)
		if reason != "" {
			return nil, reason
		}
		if !required[n] {
			c = nullable(c)
		}
		strictProps[n] = c
	}
	out["properties"] = strictProps
	out["required"] = names
	out["additionalProperties"] = false
	return out, ""
}

// nullable returns s admitting null too: "null" added to its type list,
// null to its enum, a {"type": "null"} branch to its anyOf.
func nullable(s map[string]any) map[string]any {
	out := maps.Clone(s)
	if types := typeList(s["type"]); len(types) > 0 && !slices.Contains(types, "null") {
		out["type"] = append(types, "null")
	}
	if enum, ok := s["enum"].([]any); ok && !slices.Contains(enum, nil) {
		out["enum"] = append(slices.Clone(enum), nil)
	}
	if c, ok := s["const"]; ok {
		delete(out, "const")
		out["enum"] = []any{c, nil}
	}
	if branches, ok := s["anyOf"].([]any); ok {
		out["anyOf"] = append(slices.Clone(branches), map[string]any{"type": "null"})
	}
	return out
}
