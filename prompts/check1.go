package prompts

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/twostep/twostep/workflow"
)

// rawField is a parametersSchema field as the model wrote it.
type rawField struct {
	Name        json.RawMessage `json:"name"`
	Type        json.RawMessage `json:"type"`
	Required    json.RawMessage `json:"required"`
	Description json.RawMessage `json:"description"`
}

// parseFields parses "parametersSchema": {"fields": [...]} (a bare list of
// fields is accepted too) and adds a problem for each forbidden name, type
// outside allowedFieldTypes, or malformed field.
func parseFields(raw json.RawMessage, p *problems) []workflow.FieldSpec {
	if len(raw) == 0 || isNull(raw) {
		return nil
	}
	var wrapper struct {
		Fields json.RawMessage `json:"fields"`
	}
	list := raw
	if json.Unmarshal(raw, &wrapper) == nil {
		list = wrapper.Fields
		if len(list) == 0 || isNull(list) {
			return nil
		}
	}
	var items []json.RawMessage
	if json.Unmarshal(list, &items) != nil {
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
	var rf rawField
	var f workflow.FieldSpec
	if json.Unmarshal(item, &rf) != nil {
		p.add(`parametersSchema.fields[%d] must be an object, got %s`, i, JSONKind(item))
		return f, false
	}
	if json.Unmarshal(rf.Name, &f.Name) != nil || strings.TrimSpace(f.Name) == "" {
		p.add(`parametersSchema.fields[%d].name must be a non-empty string`, i)
		return f, false
	}
	ok := true
	if workflow.IsForbiddenField(f.Name) {
		p.add(`parametersSchema.fields[%d].name %q is forbidden: documents and connections are chosen with "requiredInputDocuments" and "requiredConnection", never as parameters (forbidden: %s)`,
			i, f.Name, strings.Join(workflow.ForbiddenFields, ", "))
		ok = false
	}
	if json.Unmarshal(rf.Type, &f.Type) != nil || !slices.Contains(allowedFieldTypes, f.Type) {
		got := f.Type
		if got == "" {
			got = strings.TrimSpace(string(rf.Type))
		}
		p.add(`parametersSchema.fields[%d] (%s): type %s is not one of %s`,
			i, workflow.ClipRunes(f.Name, maxQuoted), quoteOrMissing(got), strings.Join(allowedFieldTypes, "|"))
		ok = false
	}
	if len(rf.Required) > 0 && !isNull(rf.Required) && json.Unmarshal(rf.Required, &f.Required) != nil {
		p.add(`parametersSchema.fields[%d] (%s): "required" must be true or false`, i, workflow.ClipRunes(f.Name, maxQuoted))
		ok = false
	}
	if len(rf.Description) > 0 && !isNull(rf.Description) && json.Unmarshal(rf.Description, &f.Description) != nil {
		p.add(`parametersSchema.fields[%d] (%s): "description" must be a string`, i, workflow.ClipRunes(f.Name, maxQuoted))
		ok = false
	}
	return f, ok
}

func quoteOrMissing(s string) string {
	if s == "" {
		return "(missing)"
	}
	return `"` + workflow.ClipRunes(strings.Trim(s, `"`), maxQuoted) + `"`
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
