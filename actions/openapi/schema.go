package openapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"github.com/getkin/kin-openapi/openapi3"
)

// maxSchemaDepth bounds how deep a converted schema may nest.
const maxSchemaDepth = 32

// errRecursive marks a schema that refers to itself: the parameters of an
// action are one self-contained schema, so such an operation is skipped.
var errRecursive = errors.New("its schema is recursive")

// jsonSchema converts a resolved OpenAPI schema to a JSON Schema 2020-12
// value (a map, or a bool for 3.1's boolean schemas) with every $ref
// inlined: OpenAPI 3.0's nullable becomes a "null" type, its boolean
// exclusiveMinimum/Maximum numeric bounds, and OpenAPI-only keywords
// (discriminator, xml, example, externalDocs, x-*) are dropped. It fails on
// a recursive schema or one nested deeper than maxSchemaDepth.
func jsonSchema(ref *openapi3.SchemaRef) (any, error) {
	return convert(ref, map[*openapi3.Schema]bool{}, 0)
}

func convert(ref *openapi3.SchemaRef, stack map[*openapi3.Schema]bool, depth int) (any, error) {
	if ref == nil || ref.Value == nil {
		if ref != nil && ref.Ref != "" {
			return nil, fmt.Errorf("$ref %q is not resolved", ref.Ref)
		}
		return map[string]any{}, nil
	}
	s := ref.Value
	if s.Always != nil {
		return *s.Always, nil
	}
	if stack[s] {
		return nil, errRecursive
	}
	if depth > maxSchemaDepth {
		return nil, fmt.Errorf("its schema nests deeper than %d levels", maxSchemaDepth)
	}
	stack[s] = true
	defer delete(stack, s)
	out, err := scalarKeywords(s)
	if err != nil {
		return nil, err
	}
	sub := func(r *openapi3.SchemaRef) (any, error) { return convert(r, stack, depth+1) }
	subs := func(key string, list openapi3.SchemaRefs) error {
		if len(list) == 0 {
			return nil
		}
		arr := make([]any, 0, len(list))
		for _, r := range list {
			v, err := sub(r)
			if err != nil {
				return err
			}
			arr = append(arr, v)
		}
		out[key] = arr
		return nil
	}
	named := func(key string, m openapi3.Schemas) error {
		if len(m) == 0 {
			return nil
		}
		obj := make(map[string]any, len(m))
		for name, r := range m {
			v, err := sub(r)
			if err != nil {
				return err
			}
			obj[name] = v
		}
		out[key] = obj
		return nil
	}
	one := func(key string, r *openapi3.SchemaRef) error {
		if r == nil {
			return nil
		}
		v, err := sub(r)
		if err == nil {
			out[key] = v
		}
		return err
	}
	boolSchema := func(key string, b openapi3.BoolSchema) error {
		if b.Has != nil {
			out[key] = *b.Has
		}
		return one(key, b.Schema)
	}
	for _, step := range []error{
		subs("oneOf", s.OneOf), subs("anyOf", s.AnyOf), subs("allOf", s.AllOf), subs("prefixItems", s.PrefixItems),
		one("not", s.Not), one("items", s.Items), one("contains", s.Contains), one("propertyNames", s.PropertyNames),
		one("if", s.If), one("then", s.Then), one("else", s.Else),
		named("properties", s.Properties), named("patternProperties", s.PatternProperties), named("dependentSchemas", s.DependentSchemas),
		boolSchema("additionalProperties", s.AdditionalProperties),
		boolSchema("unevaluatedItems", s.UnevaluatedItems), boolSchema("unevaluatedProperties", s.UnevaluatedProperties),
	} {
		if step != nil {
			return nil, step
		}
	}
	return out, nil
}

// scalarKeywords returns s's keywords that hold no sub-schema, as JSON
// Schema 2020-12.
func scalarKeywords(s *openapi3.Schema) (map[string]any, error) {
	if s.DynamicRef != "" {
		return nil, fmt.Errorf("its schema uses $dynamicRef %q", s.DynamicRef)
	}
	flat := *s
	flat.Extensions, flat.Origin = nil, nil
	flat.OneOf, flat.AnyOf, flat.AllOf, flat.PrefixItems = nil, nil, nil, nil
	flat.Not, flat.Items, flat.Contains, flat.PropertyNames = nil, nil, nil, nil
	flat.If, flat.Then, flat.Else, flat.ContentSchema = nil, nil, nil, nil
	flat.Properties, flat.PatternProperties, flat.DependentSchemas, flat.Defs = nil, nil, nil, nil
	flat.AdditionalProperties = openapi3.BoolSchema{}
	flat.UnevaluatedItems, flat.UnevaluatedProperties = openapi3.BoolSchema{}, openapi3.BoolSchema{}
	flat.Discriminator, flat.XML, flat.ExternalDocs, flat.Example = nil, nil, nil, nil
	flat.SchemaDialect, flat.SchemaID, flat.Anchor, flat.DynamicAnchor, flat.Comment = "", "", "", "", ""
	flat.ExclusiveMin, flat.ExclusiveMax = openapi3.ExclusiveBound{}, openapi3.ExclusiveBound{}
	flat.Nullable = false
	raw, err := json.Marshal(&flat)
	if err != nil {
		return nil, fmt.Errorf("its schema cannot be written as JSON: %w", err)
	}
	out := map[string]any{}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("its schema cannot be read back: %w", err)
	}
	maps.DeleteFunc(out, func(k string, _ any) bool { return len(k) > 2 && k[:2] == "x-" })
	bound(out, "exclusiveMinimum", "minimum", s.ExclusiveMin)
	bound(out, "exclusiveMaximum", "maximum", s.ExclusiveMax)
	if s.Nullable {
		nullable(out)
	}
	return out, nil
}

// bound writes an exclusive bound the 2020-12 way: 3.1's number as is,
// 3.0's "exclusiveMaximum: true" beside "maximum: n" as
// "exclusiveMaximum: n".
func bound(out map[string]any, key, inclusive string, b openapi3.ExclusiveBound) {
	switch {
	case b.Value != nil:
		out[key] = *b.Value
	case b.Bool != nil && *b.Bool && out[inclusive] != nil:
		out[key] = out[inclusive]
		delete(out, inclusive)
	}
}

// nullable adds "null" to a 3.0 nullable schema's type (and to its enum).
func nullable(out map[string]any) {
	switch t := out["type"].(type) {
	case string:
		out["type"] = []any{t, "null"}
	case []any:
		out["type"] = append(t, "null")
	}
	if enum, ok := out["enum"].([]any); ok {
		out["enum"] = append(enum, nil)
	}
}
