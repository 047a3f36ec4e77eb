package actions

import (
	"encoding/json"

	"github.com/twostep/twostep/workflow"
)

// ParameterSchema is an action's parameter schema compiled as the
// registry compiles it (draft 2020-12, no external $ref, an object at the
// top, no reserved property), for a caller that validates parameters of
// actions it does not run (qualify's catalogues).
type ParameterSchema struct {
	schema paramSchema
}

// CompileParameters compiles the JSON Schema of action name's parameters;
// an empty schema is an object that takes none.
func CompileParameters(name string, schema json.RawMessage) (ParameterSchema, error) {
	var doc map[string]any
	if len(schema) > 0 {
		if err := json.Unmarshal(schema, &doc); err != nil {
			return ParameterSchema{}, workflow.Errorf(workflow.KindInvalid, "the parameters of %s are not a JSON object: %v", name, err)
		}
	}
	s, err := compileSchema(name, doc)
	if err != nil {
		return ParameterSchema{}, workflow.Errorf(workflow.KindInvalid, "the parameters of %s: %v", name, err)
	}
	return ParameterSchema{schema: s}, nil
}

// Problems returns the registry's "path: message" lines for params
// (Registry.ValidateParameters without an action's own checks), nil when
// they are valid.
func (p ParameterSchema) Problems(params map[string]any) []string {
	norm, err := workflow.NormalizeParams(params)
	if err != nil {
		return []string{"/: parameters cannot be written as JSON: " + err.Error()}
	}
	return p.schema.validateNormal(norm)
}

// JSON returns the compiled schema's JSON text.
func (p ParameterSchema) JSON() json.RawMessage { return p.schema.raw }
