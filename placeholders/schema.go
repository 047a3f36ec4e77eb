package placeholders

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/twostep/twostep/textclip"
	"github.com/twostep/twostep/workflow"
)

// StageTwoSchema returns the PARAMETERS_SCHEMA value: a JSON Schema object
// rendered from the action's registered schema (workflow.ActionSpec.
// Parameters), limited to every field the action requires plus the fields
// Stage 1 asked for, in that order. A Stage 1 field description is added to
// the registered property's description. A field Stage 1 asked for that the
// registered schema lacks is shown only when the schema allows additional
// properties (with the type Stage 1 gave); forbidden field names never
// appear. The result is JSON with one property a line (each property's
// schema compact, so the prompt spends no tokens on its indentation) and
// "additionalProperties": false when the registered schema says so.
func StageTwoSchema(action workflow.ActionSpec, fields []workflow.FieldSpec) (string, error) {
	return (*Cache)(nil).StageTwoSchema(action, fields)
}

// StageTwoSchema is the package-level StageTwoSchema, memoized in c.
func (c *Cache) StageTwoSchema(action workflow.ActionSpec, fields []workflow.FieldSpec) (string, error) {
	text, _, err := c.stageTwoCut(action, fields)
	return text, err
}

// StageTwoSchemaFields returns StageTwoSchema's text and the names
// StageTwoFields returns, from one decoding of the action's schema.
func StageTwoSchemaFields(action workflow.ActionSpec, fields []workflow.FieldSpec) (string, []string, error) {
	return stageTwoSchemaFields(action, fields)
}

// StageTwoSchemaFields is the package-level StageTwoSchemaFields,
// memoized in c per action and asked fields (while the action's schema is
// the same), so retries and the parsing of the reply reuse one cut.
func (c *Cache) StageTwoSchemaFields(action workflow.ActionSpec, fields []workflow.FieldSpec) (string, []string, error) {
	text, names, err := c.stageTwoCut(action, fields)
	return text, slices.Clone(names), err
}

// stageTwoSchemaFields is StageTwoSchemaFields without the cache.
func stageTwoSchemaFields(action workflow.ActionSpec, fields []workflow.FieldSpec) (string, []string, error) {
	reg, err := registeredSchema(action)
	if err != nil {
		return "", nil, err
	}
	asked := map[string]workflow.FieldSpec{}
	for _, f := range fields {
		asked[f.Name] = f
	}
	names := stageTwoNames(reg, fields)

	var b bytes.Buffer
	b.WriteString("{\n  \"type\": \"object\",\n  \"properties\": {")
	var required []string
	for i, name := range names {
		prop, err := property(reg.Properties[name], asked[name])
		if err != nil {
			return "", nil, workflow.WrapKind(workflow.KindInternal, err, "action %s: property %q", action.Name, name)
		}
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(name)
		b.WriteString("\n    ")
		b.Write(key)
		b.WriteString(": ")
		b.WriteString(strings.ReplaceAll(string(prop), "\n", "\n    "))
		if reg.IsRequired(name) {
			required = append(required, name)
		}
	}
	if len(names) > 0 {
		b.WriteString("\n  ")
	}
	b.WriteString("}")
	req, _ := json.Marshal(required)
	if len(required) == 0 {
		req = []byte("[]")
	}
	b.WriteString(",\n  \"required\": ")
	b.Write(req)
	if reg.Closed {
		b.WriteString(",\n  \"additionalProperties\": false")
	}
	b.WriteString("\n}")
	return b.String(), names, nil
}

// registeredSchema reads action.Parameters (workflow.ReadActionSchema).
func registeredSchema(action workflow.ActionSpec) (workflow.ActionSchema, error) {
	reg, err := workflow.ReadActionSchema(action.Parameters)
	if err != nil {
		return reg, workflow.WrapKind(workflow.KindInternal, err, "action %s: parameter schema is not a JSON object", action.Name)
	}
	return reg, nil
}

// StageTwoFields returns the parameter names Stage 2 may fill for action
// after Stage 1 asked for fields: every parameter the registered schema
// requires, then each asked field the schema admits (a forbidden name never;
// a name the schema lacks only when it allows additional properties), in
// that order without repeats. These are exactly the properties
// StageTwoSchema shows; any other parameter key is one Stage 1 did not ask
// for. It fails only when the registered schema is not a JSON object.
func StageTwoFields(action workflow.ActionSpec, fields []workflow.FieldSpec) ([]string, error) {
	return (*Cache)(nil).StageTwoFields(action, fields)
}

// StageTwoFields is the package-level StageTwoFields, memoized in c.
func (c *Cache) StageTwoFields(action workflow.ActionSpec, fields []workflow.FieldSpec) ([]string, error) {
	if _, names, err := c.stageTwoCut(action, fields); err == nil {
		return slices.Clone(names), nil
	}
	// The schema text could not be cut (a property that is not an object
	// schema): the names alone may still be known.
	reg, err := registeredSchema(action)
	if err != nil {
		return nil, err
	}
	return stageTwoNames(reg, fields), nil
}

// stageTwoNames is StageTwoFields on a decoded schema.
func stageTwoNames(reg workflow.ActionSchema, fields []workflow.FieldSpec) []string {
	var names []string
	for _, name := range reg.Names() {
		if reg.IsRequired(name) {
			names = append(names, name)
		}
	}
	for _, f := range fields {
		_, known := reg.Properties[f.Name]
		if slices.Contains(names, f.Name) || workflow.IsForbiddenField(f.Name) || (!known && reg.Closed) {
			continue
		}
		names = append(names, f.Name)
	}
	return names
}

// property returns the schema of one property on one line (compact JSON):
// the registered one with Stage 1's description added, or one made from
// Stage 1's field.
func property(registered json.RawMessage, f workflow.FieldSpec) ([]byte, error) {
	m := map[string]any{}
	if len(registered) > 0 {
		if err := json.Unmarshal(registered, &m); err != nil {
			return nil, err
		}
	} else {
		switch f.Type {
		case "enum":
			m["type"] = "string"
		case "string", "number", "integer", "boolean", "object":
			m["type"] = f.Type
		case "array":
			m["type"] = f.Type
			if f.Items != "" {
				m["items"] = map[string]any{"type": f.Items}
			}
		}
	}
	if d := textclip.OneLine(f.Description); d != "" {
		if old, ok := m["description"].(string); ok && old != "" && old != d {
			m["description"] = old + " (for this step: " + d + ")"
		} else {
			m["description"] = d
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}
