package prompts

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/twostep/twostep/textclip"
	"github.com/twostep/twostep/workflow"
)

// allowedFieldTypes are the parametersSchema field types of DESIGN §3: the
// seed's words and JSON Schema's "integer" and "array" (whose "items" may
// name the element type), which a model copying an action's schema writes.
var allowedFieldTypes = []string{"string", "number", "integer", "boolean", "enum", "object", "array"}

// itemTypes are the element types an "array" field's "items" may name.
var itemTypes = []string{"string", "number", "integer", "boolean", "object"}

// fieldTypes judges the "type" of each field a Stage 1 reply asks for,
// against the chosen action's registered parameters. The schema's
// properties are split once, when a field needs them, and only the
// properties a reply names are decoded: a Stage 1 reply is parsed on every
// step, and decoding the whole schema each time cost a step about 30
// allocations.
type fieldTypes struct {
	spec  workflow.ActionSpec
	known bool
	split bool
	props rawObject // the schema's properties as written
	// whole is the schema decoded by encoding/json, for a schema this
	// scanner does not split (escapes in its keys, an unusual text).
	whole  *workflow.ActionSchema
	params []workflow.SchemaParam
}

// newFieldTypes returns the judge for fields of spec (known false: the
// reply named no registered action, so no field is registered).
func newFieldTypes(spec workflow.ActionSpec, known bool) *fieldTypes {
	return &fieldTypes{spec: spec, known: known}
}

// registered returns the action's parameter named name, if it has one
// (its Required flag unset: see required).
func (t *fieldTypes) registered(name string) (workflow.SchemaParam, bool) {
	if t == nil || !t.known {
		return workflow.SchemaParam{}, false
	}
	if !t.split {
		t.splitSchema()
	}
	if t.whole != nil {
		k := slices.IndexFunc(t.params, func(x workflow.SchemaParam) bool { return x.Name == name })
		if k < 0 {
			return workflow.SchemaParam{}, false
		}
		return t.params[k], true
	}
	raw, ok := t.props.get(name)
	if !ok {
		return workflow.SchemaParam{}, false
	}
	return workflow.ParamOf(name, raw, false), true
}

// required reports whether the action's schema requires name.
func (t *fieldTypes) required(name string) bool {
	s, _ := workflow.ReadActionSchema(t.spec.Parameters) // unreadable: nothing required
	return s.IsRequired(name)
}

// splitSchema splits the schema's properties, or decodes it whole when it
// does not split.
func (t *fieldTypes) splitSchema() {
	t.split = true
	raw := t.spec.Parameters
	if len(raw) == 0 || isNull(raw) {
		return
	}
	var top [16]rawMember
	schema, ok := splitObject(raw, top[:])
	if ok {
		props, has := schema.get("properties")
		if !has || isNull(props) {
			return
		}
		if t.props, ok = splitObject(props, nil); ok {
			return
		}
	}
	s, _ := workflow.ReadActionSchema(raw) // unreadable: no params
	t.whole, t.params, t.props = &s, s.Params(), nil
}

// judge sets f.Type (and f.Items) from the field's raw "type" and "items"
// and reports whether they are acceptable, adding a problem when not. A
// field the action registers takes its type from the action whatever
// Stage 1 wrote (its schema is the action's); a field named without a type
// is left for resolveNamedFields; any other field needs one of
// allowedFieldTypes, and an "array" field's "items", when given, one of
// itemTypes (as {"type": word} or the bare word).
func (t *fieldTypes) judge(i int, f *workflow.FieldSpec, typ, items json.RawMessage, p *problems) bool {
	if missingType(typ) {
		return true
	}
	if param, ok := t.registered(f.Name); ok {
		f.Type = fieldType(param.Type)
		return true
	}
	if !unmarshalString(typ, &f.Type) || !slices.Contains(allowedFieldTypes, f.Type) {
		got := f.Type
		if got == "" {
			got = strings.TrimSpace(string(typ))
		}
		f.Type = ""
		p.add(`parametersSchema.fields[%d] (%s): type %s is not one of %s`,
			i, textclip.ClipRunes(f.Name, maxQuoted), quoteOrMissing(got), strings.Join(allowedFieldTypes, "|"))
		return false
	}
	if f.Type != "array" || len(items) == 0 || isNull(items) {
		return true
	}
	if f.Items = itemType(items); f.Items == "" {
		p.add(`parametersSchema.fields[%d] (%s): "items" must be {"type": one of %s}`,
			i, textclip.ClipRunes(f.Name, maxQuoted), strings.Join(itemTypes, "|"))
		return false
	}
	return true
}

// itemType returns the element type an array field's "items" names
// ({"type": word} or the bare word), "" when it names none of itemTypes.
func itemType(raw json.RawMessage) string {
	var word string
	if !unmarshalString(raw, &word) {
		var members [4]rawMember
		obj, ok := splitObject(raw, members[:])
		if !ok || !unmarshalString(obj.getFold("type"), &word) {
			return ""
		}
	}
	if !slices.Contains(itemTypes, word) {
		return ""
	}
	return word
}

// missingType reports whether a field's "type" was left out (absent, null
// or ""): a field named only, which the action's schema must register.
func missingType(raw json.RawMessage) bool {
	if len(raw) == 0 || isNull(raw) {
		return true
	}
	var s string
	return unmarshalString(raw, &s) && strings.TrimSpace(s) == ""
}

// resolveNamedFields completes the fields Stage 1 named without a type
// (DESIGN §10.1): a field the chosen action's schema registers takes its
// type and required flag from there (its description stays the action's,
// which Stage 2 shows); a field the action does not register is a problem
// that asks for its type and description. With no known action the fields
// are left as they are (the action's own problem already asks for a retry).
func resolveNamedFields(fields []workflow.FieldSpec, types *fieldTypes, p *problems) {
	if !types.known {
		return
	}
	for i := range fields {
		f := &fields[i]
		if f.Type != "" {
			continue
		}
		param, ok := types.registered(f.Name)
		if !ok {
			p.add(`parametersSchema field %q: %s does not register it, so it needs a "type" (one of %s) and a "description"; a field the action registers may be given by name alone`,
				textclip.ClipRunes(f.Name, maxQuoted), types.spec.Name, strings.Join(allowedFieldTypes, "|"))
			continue
		}
		f.Type, f.Required = fieldType(param.Type), types.required(f.Name)
	}
}

// fieldType is the Stage 1 field type of a registered parameter's JSON
// Schema type (workflow.SchemaParam.Type): one of allowedFieldTypes as it
// is, anything else (a union, none) an object.
func fieldType(t string) string {
	if slices.Contains(allowedFieldTypes, t) {
		return t
	}
	return "object"
}

func quoteOrMissing(s string) string {
	if s == "" {
		return "(missing)"
	}
	return `"` + textclip.ClipRunes(strings.Trim(s, `"`), maxQuoted) + `"`
}
