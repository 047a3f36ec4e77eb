package workflow

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// ActionSchema is an action's parameter schema (ActionSpec.Parameters, a
// JSON Schema object) as the project reads it: its top-level properties,
// the required ones and whether it is closed. ReadActionSchema is the one
// reader: the methods list, the Stage 2 cut and the approval checks all
// read a schema through it.
type ActionSchema struct {
	// Properties holds each top-level property's own schema, verbatim.
	Properties map[string]json.RawMessage
	// Required lists the required property names, as the schema does.
	Required []string
	// Closed reports "additionalProperties": false.
	Closed bool
}

// SchemaParam is one top-level property of an action's parameter schema.
type SchemaParam struct {
	Name string
	// Type is the property's JSON Schema type ("a|b" for a list of
	// types, "enum" for an enum, "any" when it has none).
	Type     string
	Required bool
	// Schema is the property's own JSON Schema, verbatim.
	Schema json.RawMessage
}

// ReadActionSchema decodes an action's parameter schema. An empty schema
// is open and has no properties; a schema that is not a JSON object (or
// whose properties or required list are malformed) is an error.
func ReadActionSchema(raw json.RawMessage) (ActionSchema, error) {
	var doc struct {
		Properties           map[string]json.RawMessage `json:"properties"`
		Required             []string                   `json:"required"`
		AdditionalProperties json.RawMessage            `json:"additionalProperties"`
	}
	if len(raw) == 0 {
		return ActionSchema{}, nil
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return ActionSchema{}, fmt.Errorf("read action schema: %w", err)
	}
	return ActionSchema{Properties: doc.Properties, Required: doc.Required,
		Closed: bytes.Equal(bytes.TrimSpace(doc.AdditionalProperties), []byte("false"))}, nil
}

// IsRequired reports whether the schema requires the property name.
func (s ActionSchema) IsRequired(name string) bool { return slices.Contains(s.Required, name) }

// Names returns the top-level property names, sorted.
func (s ActionSchema) Names() []string { return slices.Sorted(maps.Keys(s.Properties)) }

// Params returns the top-level properties with their types: required ones
// first, each group sorted by name.
func (s ActionSchema) Params() []SchemaParam {
	out := make([]SchemaParam, 0, len(s.Properties))
	for name, raw := range s.Properties {
		out = append(out, ParamOf(name, raw, s.IsRequired(name)))
	}
	slices.SortFunc(out, func(a, b SchemaParam) int {
		if a.Required != b.Required {
			if a.Required {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// ParamOf is the parameter name of an action's schema whose property
// schema is raw: its type read from raw ("enum" when it lists values,
// "any" when raw is not an object or names no type).
func ParamOf(name string, raw json.RawMessage, required bool) SchemaParam {
	var p struct {
		Type any   `json:"type"`
		Enum []any `json:"enum"`
	}
	_ = json.Unmarshal(raw, &p) // a property that is not an object has type "any"
	typ := schemaTypeName(p.Type)
	if len(p.Enum) > 0 {
		typ = "enum"
	}
	return SchemaParam{Name: name, Type: typ, Required: required, Schema: raw}
}

// schemaTypeName renders a JSON Schema "type" (a string or a list of
// strings).
func schemaTypeName(t any) string {
	switch v := t.(type) {
	case string:
		return v
	case []any:
		var names []string
		for _, x := range v {
			if s, ok := x.(string); ok {
				names = append(names, s)
			}
		}
		return strings.Join(names, "|")
	}
	return "any"
}
