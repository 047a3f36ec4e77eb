package actions

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/twostep/twostep/workflow"
)

// paramSchema is an action's compiled parameter schema and its JSON text.
type paramSchema struct {
	compiled *jsonschema.Schema
	raw      json.RawMessage
}

// noLoader refuses every $ref outside the schema itself, so a configured
// schema can never make the gateway read a file or fetch a URL.
type noLoader struct{}

// Load refuses url.
func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external schema references are not allowed (%s)", url)
}

// compileSchema compiles the JSON Schema doc (decoded JSON or YAML) of the
// action name. The top level must be an object schema and must not declare
// a reserved field (workflow.ForbiddenFields). A nil or empty doc is an
// object that accepts no parameters.
func compileSchema(name string, doc map[string]any) (paramSchema, error) {
	if len(doc) == 0 {
		doc = map[string]any{"type": "object", "additionalProperties": false}
	}
	if doc["type"] != "object" {
		return paramSchema{}, errors.New(`the top-level "type" must be "object"`)
	}
	if props, ok := doc["properties"].(map[string]any); ok {
		for _, p := range slices.Sorted(maps.Keys(props)) {
			if workflow.IsForbiddenField(p) {
				return paramSchema{}, fmt.Errorf("property %q is reserved: documents and connections are passed apart from parameters", p)
			}
		}
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		return paramSchema{}, fmt.Errorf("cannot be written as JSON: %w", err)
	}
	normal, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return paramSchema{}, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	url := "mem:///actions/" + name + ".json"
	if err := c.AddResource(url, normal); err != nil {
		return paramSchema{}, err
	}
	compiled, err := c.Compile(url)
	if err != nil {
		return paramSchema{}, err
	}
	return paramSchema{compiled: compiled, raw: raw}, nil
}

// mustCompileSchema compiles a built-in action's schema, written as JSON.
func mustCompileSchema(name, text string) paramSchema {
	var doc map[string]any
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		panic(fmt.Sprintf("actions: built-in schema of %s: %v", name, err))
	}
	s, err := compileSchema(name, doc)
	if err != nil {
		panic(fmt.Sprintf("actions: built-in schema of %s: %v", name, err))
	}
	return s
}

// validateNormal checks normalized params (workflow.NormalizeParams) and returns one
// "path: message" line per problem, sorted, or nil when params are valid.
// Paths are JSON Pointers into the parameters object ("/" is the object).
func (s paramSchema) validateNormal(params map[string]any) []string {
	var lines []string
	for _, k := range slices.Sorted(maps.Keys(params)) {
		if workflow.IsForbiddenField(k) {
			lines = append(lines, pointer([]string{k})+": reserved name: documents and connections are chosen with the action, never passed as parameters")
		}
	}
	err := s.compiled.Validate(params)
	if err == nil {
		return lines
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return append(lines, "/: "+err.Error())
	}
	collectLines(ve, message.NewPrinter(language.English), &lines)
	slices.Sort(lines)
	return slices.Compact(lines)
}

// collectLines appends one line per leaf of the validation error tree.
func collectLines(ve *jsonschema.ValidationError, p *message.Printer, lines *[]string) {
	if len(ve.Causes) > 0 {
		for _, c := range ve.Causes {
			collectLines(c, p, lines)
		}
		return
	}
	switch k := ve.ErrorKind.(type) {
	case *kind.Required:
		for _, m := range k.Missing {
			*lines = append(*lines, pointer(append(slices.Clone(ve.InstanceLocation), m))+": required parameter is missing")
		}
	case *kind.AdditionalProperties:
		for _, p := range k.Properties {
			if len(ve.InstanceLocation) == 0 && workflow.IsForbiddenField(p) {
				continue // reported as reserved
			}
			*lines = append(*lines, pointer(append(slices.Clone(ve.InstanceLocation), p))+": unknown parameter, not allowed here")
		}
	default:
		*lines = append(*lines, pointer(ve.InstanceLocation)+": "+ve.ErrorKind.LocalizedString(p))
	}
}

// pointer renders an instance location as a JSON Pointer.
func pointer(loc []string) string {
	if len(loc) == 0 {
		return "/"
	}
	var b strings.Builder
	for _, tok := range loc {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(tok))
	}
	return b.String()
}
