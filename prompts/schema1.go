package prompts

import (
	"fmt"

	"github.com/twostep/twostep/workflow"
)

// The names of the stages' native output schemas (tool or response format).
const (
	Stage1SchemaName = "select_action"
	Stage2SchemaName = "fill_parameters"
)

// ObjectReply reports whether stage's reply is one JSON object (Stage 1
// and Stage 2), so its model call asks for JSON mode; a plan is an array,
// a compaction and an action's own call answer prose.
func ObjectReply(stage workflow.Stage) bool {
	return stage == workflow.StageOne || stage == workflow.StageTwo
}

// ReferencePattern is the JSON Schema pattern of a document reference a
// Stage 1 reply may list (DESIGN §4): docList:<messageId>:<label>,
// docList:<label>, docItem:<documentId>:<fileName> or docItem:<documentId>.
// It only shapes what a provider lets the model write; ParseStage1 still
// resolves every reference in the workflow.
const ReferencePattern = `^doc(List|Item):[^:]+(:.+)?$`

// maxStrictEnumValues is OpenAI's strict-mode limit on enum values in one
// schema; a schema with more is sent as not strict.
const maxStrictEnumValues = 500

// Stage1Output returns the native output schema of a Stage 1 reply: exactly
// the keys of DESIGN §3, in the order of DESIGN §11.2, all required (strict mode); "action"
// an enum of the offered actions; "requiredConnection" an enum of the
// user's connection labels or null, and left out for a user without
// connections (the parser reads an absent key as null); each "requiredInputDocuments" item a
// reference (ReferencePattern); "parametersSchema.fields" items with the
// allowed field types, or null ones for a field the action registers
// (named alone). The keys' meaning is left to the prompt's rules, which
// every output mode shows. No parameter values can be expressed in it. The
// reply is still parsed and validated by ParseStage1 in every mode.
func Stage1Output(actions []workflow.ActionSpec, conns []workflow.Connection) workflow.OutputSchema {
	names := make([]any, 0, len(actions))
	for _, a := range actions {
		names = append(names, a.Name)
	}
	var connection object // none: a user without connections is not asked for one
	if len(conns) > 0 {
		labels := make([]any, 0, len(conns)+1)
		for _, c := range conns {
			labels = append(labels, c.Label)
		}
		connection = object{
			{"type", []string{"string", "null"}},
			{"enum", append(labels, nil)},
			{"description", "The label of the connection the action uses, exactly as listed; null when it uses none."},
		}
	}
	types := words(allowedFieldTypes)
	// A field the action registers is named alone: type, required and
	// description null (strict mode requires every key; null leaves it out).
	field := closedObject(
		member{"name", object{{"type", "string"}, {"description", "The business parameter's name."}}},
		member{"type", object{{"type", []string{"string", "null"}}, {"enum", append(types, nil)},
			{"description", "null for a parameter the action lists; else its type."}}},
		member{"items", object{{"type", []string{"string", "null"}}, {"enum", append(words(itemTypes), nil)},
			{"description", "for an array field the action does not list: its element type; else null."}}},
		member{"required", object{{"type", []string{"boolean", "null"}}}},
		member{"description", object{{"type", []string{"string", "null"}},
			{"description", "null for a parameter the action lists; else what Stage 2 should put in it."}}},
	)
	// The keys' meaning is the prompt's rules (the same text in every
	// output mode), so the schema describes only what the rules cannot:
	// the connection choice and the null members of a field.
	// The four keys Stage 2 is rendered from come first, so a streamed
	// reply lets Stage 2 start before the rest is written (DESIGN §11.2).
	members := []member{
		{"actionObjective", object{{"type", "string"}}},
		{"action", object{{"type", "string"}, {"enum", names}}},
		{"parametersContext", object{{"type", "string"}}},
		{"parametersSchema", closedObject(member{"fields", object{{"type", "array"}, {"items", field}}})},
		{"learnings", object{{"type", "array"}, {"items", object{{"type", "string"}}}}},
		{"requiredInputDocuments", object{{"type", "array"},
			{"items", object{{"type", "string"}, {"pattern", ReferencePattern}}}}},
	}
	if connection != nil {
		members = append(members, member{"requiredConnection", connection})
	}
	schema := closedObject(members...)
	out := workflow.OutputSchema{
		Name:        Stage1SchemaName,
		Description: "Choose the next action and describe, without values, the parameters Stage 2 will fill.",
		Strict:      true,
	}
	if n := len(names) + len(conns); n > maxStrictEnumValues {
		out.Strict = false
		out.NotStrict = fmt.Sprintf("the Stage 1 schema has %d enum values (actions and connections); strict mode takes at most %d", n, maxStrictEnumValues)
	}
	return withSchema(out, schema)
}

// closedObject is an object schema whose members are all required and
// which admits no other key (strict mode's form).
func closedObject(props ...member) object {
	required := make([]string, len(props))
	for i, p := range props {
		required[i] = p.key
	}
	return object{
		{"type", "object"},
		{"properties", object(props)},
		{"required", required},
		{"additionalProperties", false},
	}
}

// withSchema sets out.Schema to schema's JSON. Marshalling cannot fail for
// the strings, numbers, lists and objects schemas are built from; if it
// ever did, the schema is left empty and out says why, so every provider
// falls back to the prompt's description of the reply.
func withSchema(out workflow.OutputSchema, schema any) workflow.OutputSchema {
	b, err := marshal(schema)
	if err != nil {
		return workflow.OutputSchema{Name: out.Name, NotStrict: "the schema could not be encoded: " + err.Error()}
	}
	out.Schema = b
	return out
}

// words returns list as enum values, with room for one more.
func words(list []string) []any {
	out := make([]any, len(list), len(list)+1)
	for i, w := range list {
		out[i] = w
	}
	return out
}
