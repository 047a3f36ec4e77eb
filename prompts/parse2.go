package prompts

import (
	"encoding/json"
	"strings"

	"github.com/twostep/twostep/placeholders"
	"github.com/twostep/twostep/templates/notices"
	"github.com/twostep/twostep/textclip"
	"github.com/twostep/twostep/workflow"
)

// ParametersSchemaID is the "schema" value a Stage 2 reply must carry.
const ParametersSchemaID = "parameters_v1"

// Stage2Result is the outcome of parsing a Stage 2 reply. Problems empty
// means accepted and Parameters are schema-valid for the action; otherwise
// each problem is one line ("path: message" for schema errors), ready for
// Feedback. Parsed is the extracted, repaired JSON, for the trace.
type Stage2Result struct {
	Parameters map[string]any
	Parsed     json.RawMessage
	Problems   []string
}

// ParseStage2 parses {"schema": "parameters_v1", "parameters": {...}}
// (fenced, wrapped in prose or slightly malformed replies are extracted
// and repaired), rejects a missing or different "schema", a missing or
// non-object "parameters" and every forbidden key (workflow.ForbiddenFields),
// rejects every key outside the fields Stage 1 asked for plus the action's
// required ones (CheckAskedFields, asked being Stage 1's
// parametersSchema.fields), then validates the parameters with
// reg.ValidateParameters and adds its "path: message" lines. It never panics; the reply is capped at
// MaxReplyBytes first.
func ParseStage2(reply string, action workflow.ActionSpec, asked []workflow.FieldSpec, reg workflow.Registry) Stage2Result {
	return parseStage2(nil, reply, action, asked, reg)
}

// parseStage2 is ParseStage2, its Stage 2 cut memoized in c (nil: not).
func parseStage2(c *placeholders.Cache, reply string, action workflow.ActionSpec, asked []workflow.FieldSpec, reg workflow.Registry) Stage2Result {
	raw, err := ExtractObject(reply)
	if err != nil {
		return Stage2Result{Problems: []string{workflow.PublicMessage(err)}}
	}
	res := Stage2Result{Parsed: raw}
	var members [4]rawMember
	obj, err := decodeObject(raw, members[:])
	if err != nil {
		res.Problems = []string{err.Error()}
		return res
	}
	p := &problems{}
	schemaRaw, ok := obj.get("schema")
	var schema string
	switch {
	case !ok:
		p.add(`"schema" is missing: reply with {"schema": %q, "parameters": {...}}`, ParametersSchemaID)
	case !unmarshalString(schemaRaw, &schema) || schema != ParametersSchemaID:
		p.add(`"schema" must be %q, got %s`, ParametersSchemaID, textclip.ClipRunes(strings.TrimSpace(string(schemaRaw)), maxQuoted))
	}
	paramsRaw, ok := obj.get("parameters")
	if !ok {
		p.add(`"parameters" is missing: reply with {"schema": %q, "parameters": {...}}`, ParametersSchemaID)
		res.Problems = p.lines
		return res
	}
	var params map[string]any
	if json.Unmarshal(paramsRaw, &params) != nil || params == nil {
		p.add(`"parameters" must be an object, got %s`, JSONKind(paramsRaw))
		res.Problems = p.lines
		return res
	}
	for _, line := range workflow.ForbiddenKeyProblems(params) {
		p.add("%s", line)
	}
	for _, line := range checkAskedFields(c, params, action, asked) {
		p.add("%s", textclip.Clip(line, workflow.MaxProblemLine))
	}
	if reg == nil {
		p.add("no registry to validate the parameters against")
	} else {
		for _, line := range reg.ValidateParameters(action.Name, params) {
			p.add("%s", textclip.Clip(line, workflow.MaxProblemLine))
		}
	}
	res.Parameters = params
	res.Problems = p.lines
	return res
}

// Feedback returns the VALIDATION_FEEDBACK text for a retry (see
// notices.Feedback): "" when there is no problem.
func Feedback(problems []string) string {
	return notices.Feedback(problems)
}
