package prompts

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/twostep/twostep/textclip"
	"github.com/twostep/twostep/workflow"
)

// parseFields parses "parametersSchema": {"fields": [...]} (a bare list of
// fields is accepted too) and adds a problem for each forbidden name, type
// outside allowedFieldTypes, or malformed field. The object's "fields" and
// each field's members are matched the way encoding/json matches struct
// fields (any case, the last one written wins).
func parseFields(raw json.RawMessage, p *problems) []workflow.FieldSpec {
	if len(raw) == 0 || isNull(raw) {
		return nil
	}
	list := raw
	var members [4]rawMember
	if obj, ok := splitObject(raw, members[:]); ok {
		list = obj.getFold("fields")
		if len(list) == 0 || isNull(list) {
			return nil
		}
	}
	var stack [16]json.RawMessage
	items, ok := splitArray(list, stack[:])
	if !ok {
		p.add(`"parametersSchema" must be {"fields": [{"name", "type", "required", "description"}, ...]}, got %s`, JSONKind(list))
		return nil
	}
	fields := make([]workflow.FieldSpec, 0, len(items))
	for i, item := range items {
		if f, ok := parseField(i, item, p); ok {
			fields = append(fields, f)
		}
	}
	return fields
}

func parseField(i int, item json.RawMessage, p *problems) (workflow.FieldSpec, bool) {
	var f workflow.FieldSpec
	var name, typ, required, description json.RawMessage
	var members [6]rawMember
	if obj, ok := splitObject(item, members[:]); ok {
		name, typ = obj.getFold("name"), obj.getFold("type")
		required, description = obj.getFold("required"), obj.getFold("description")
	} else if !isNull(item) {
		p.add(`parametersSchema.fields[%d] must be an object, got %s`, i, JSONKind(item))
		return f, false
	}
	if !unmarshalString(name, &f.Name) || strings.TrimSpace(f.Name) == "" {
		p.add(`parametersSchema.fields[%d].name must be a non-empty string`, i)
		return f, false
	}
	ok := true
	if workflow.IsForbiddenField(f.Name) {
		p.add(`parametersSchema.fields[%d].name %q is forbidden: documents and connections are chosen with "requiredInputDocuments" and "requiredConnection", never as parameters (forbidden: %s)`,
			i, f.Name, strings.Join(workflow.ForbiddenFields, ", "))
		ok = false
	}
	if missingType(typ) {
		// Named only: the action's schema gives the type (resolveNamedFields).
	} else if !unmarshalString(typ, &f.Type) || !slices.Contains(allowedFieldTypes, f.Type) {
		got := f.Type
		if got == "" {
			got = strings.TrimSpace(string(typ))
		}
		p.add(`parametersSchema.fields[%d] (%s): type %s is not one of %s`,
			i, textclip.ClipRunes(f.Name, maxQuoted), quoteOrMissing(got), strings.Join(allowedFieldTypes, "|"))
		ok = false
	}
	if len(required) > 0 && !isNull(required) && !unmarshalBool(required, &f.Required) {
		p.add(`parametersSchema.fields[%d] (%s): "required" must be true or false`, i, textclip.ClipRunes(f.Name, maxQuoted))
		ok = false
	}
	if len(description) > 0 && !isNull(description) && !unmarshalString(description, &f.Description) {
		p.add(`parametersSchema.fields[%d] (%s): "description" must be a string`, i, textclip.ClipRunes(f.Name, maxQuoted))
		ok = false
	}
	return f, ok
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
func resolveNamedFields(fields []workflow.FieldSpec, spec workflow.ActionSpec, known bool, p *problems) {
	if !known {
		return
	}
	var params []workflow.SchemaParam // decoded once, when a field needs it
	for i := range fields {
		f := &fields[i]
		if f.Type != "" {
			continue
		}
		if params == nil {
			s, _ := workflow.ReadActionSchema(spec.Parameters) // unreadable: no params
			params = s.Params()
		}
		k := slices.IndexFunc(params, func(x workflow.SchemaParam) bool { return x.Name == f.Name })
		if k < 0 {
			p.add(`parametersSchema field %q: %s does not register it, so it needs a "type" (one of %s) and a "description"; a field the action registers may be given by name alone`,
				textclip.ClipRunes(f.Name, maxQuoted), spec.Name, strings.Join(allowedFieldTypes, "|"))
			continue
		}
		f.Type, f.Required = fieldType(params[k].Type), params[k].Required
	}
}

// fieldType is the Stage 1 field type of a registered parameter's JSON
// Schema type (workflow.SchemaParam.Type): integer is a number, anything
// outside allowedFieldTypes (an array, a union) is an object.
func fieldType(t string) string {
	switch {
	case t == "integer":
		return "number"
	case slices.Contains(allowedFieldTypes, t):
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

// stage1Fields are the Stage 1 reply's fields for a step's inputs.
var stage1Fields = workflow.InputFields{Documents: "requiredInputDocuments", Connection: "requiredConnection"}

// checkInputs adds the problems workflow.CheckStepInputs finds with the
// selection's documents and connection.
func checkInputs(sel *workflow.Selection, env Stage1Env, spec workflow.ActionSpec, known bool, p *problems) {
	for _, line := range workflow.CheckStepInputs(workflow.StepInputs{
		Action: spec, Known: known, Documents: sel.RequiredInputDocuments, Connection: sel.RequiredConnection,
		Messages: env.Messages, Connections: env.Connections, Fields: stage1Fields,
	}) {
		p.add("%s", line)
	}
}
