package prompts

import (
	"encoding/json"
	"strings"

	"github.com/twostep/twostep/textclip"
	"github.com/twostep/twostep/workflow"
)

// parseFields parses "parametersSchema": {"fields": [...]} (a bare list of
// fields is accepted too) and adds a problem for each forbidden name, type
// outside allowedFieldTypes (fieldTypes.judge), or malformed field. The
// object's "fields" and each field's members are matched the way
// encoding/json matches struct fields (any case, the last one written wins).
func parseFields(raw json.RawMessage, types *fieldTypes, p *problems) []workflow.FieldSpec {
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
		if f, ok := parseField(i, item, types, p); ok {
			fields = append(fields, f)
		}
	}
	return fields
}

func parseField(i int, item json.RawMessage, types *fieldTypes, p *problems) (workflow.FieldSpec, bool) {
	var f workflow.FieldSpec
	var name, typ, items, required, description json.RawMessage
	var members [8]rawMember
	if obj, ok := splitObject(item, members[:]); ok {
		name, typ, items = obj.getFold("name"), obj.getFold("type"), obj.getFold("items")
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
	if !types.judge(i, &f, typ, items, p) {
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
