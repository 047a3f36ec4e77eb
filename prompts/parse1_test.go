package prompts

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/twostep/twostep/workflow"
)

func stage1Env() Stage1Env {
	reg := newRegistry()
	_, msgs := twoRounds()
	// A message of another workflow, as a careless caller might pass it.
	msgs = append(msgs, workflow.Message{ID: "msg_x", WorkflowID: "wf_b", Seq: 1, Round: 1, Role: workflow.RoleUser,
		DocumentsLabel: "round1_user_context", Documents: []workflow.Document{{ID: "doc_x", WorkflowID: "wf_b", MessageID: "msg_x", Name: "x.pdf"}}})
	return Stage1Env{Registry: reg, Messages: msgs, Connections: reg.Connections("u1")}
}

const validStage1 = `{
  "action": "crm.lookup",
  "actionObjective": "Find ACME's open invoices",
  "learnings": ["ACME's CRM id is 4711."],
  "requiredInputDocuments": ["docList:msg_r1u:round1_user_context", "docItem:doc_text:contract.txt"],
  "requiredConnection": "crm-prod",
  "parametersContext": "Customer id 4711 (ACME Corp).",
  "parametersSchema": {"fields": [{"name": "customer", "type": "string", "required": true, "description": "CRM id"}]}
}`

func TestParseStage1Accepts(t *testing.T) {
	t.Parallel()
	want := workflow.Selection{
		Action:                 "crm.lookup",
		ActionObjective:        "Find ACME's open invoices",
		Learnings:              []string{"ACME's CRM id is 4711."},
		RequiredInputDocuments: []string{"docList:msg_r1u:round1_user_context", "docItem:doc_text:contract.txt"},
		RequiredConnection:     "crm-prod",
		ParametersContext:      "Customer id 4711 (ACME Corp).",
		ParametersSchema:       workflow.ParametersSchema{Fields: []workflow.FieldSpec{{Name: "customer", Type: "string", Required: true, Description: "CRM id"}}},
	}
	tests := []struct {
		name  string
		reply string
		edit  func(*workflow.Selection)
	}{
		{name: "bare", reply: validStage1},
		{name: "fenced in prose", reply: "Sure! Here is my choice [final]:\n```json\n" + validStage1 + "\n```\nLet me know."},
		{name: "trailing comma and single quotes repaired", reply: strings.Replace(validStage1, `"requiredConnection": "crm-prod",`, `'requiredConnection': 'crm-prod',`, 1)[:len(validStage1)-2] + ",}"},
		{name: "learnings as one string", reply: strings.Replace(validStage1, `["ACME's CRM id is 4711."]`, `"ACME's CRM id is 4711."`, 1)},
		{name: "extra keys ignored", reply: strings.Replace(validStage1, `"action":`, `"thoughts": "hmm", "action":`, 1)},
		{
			name:  "connection null, no documents, complete",
			reply: `{"action": "workflow.complete", "actionObjective": "Answer", "learnings": [], "requiredInputDocuments": [], "requiredConnection": null, "parametersContext": "say hi", "parametersSchema": {"fields": [{"name": "message", "type": "string", "required": true}]}}`,
			edit: func(s *workflow.Selection) {
				*s = workflow.Selection{Action: workflow.CompleteAction, ActionObjective: "Answer", Learnings: []string{}, RequiredInputDocuments: []string{},
					ParametersContext: "say hi", ParametersSchema: workflow.ParametersSchema{Fields: []workflow.FieldSpec{{Name: "message", Type: "string", Required: true}}}}
			},
		},
		{
			name:  "empty connection string and docList by label",
			reply: `{"action": "ai.process", "actionObjective": "Summarise", "requiredInputDocuments": "docList:round1_step1_document_extract", "requiredConnection": "", "parametersContext": {"tone": "brief"}, "parametersSchema": {"fields": []}}`,
			edit: func(s *workflow.Selection) {
				*s = workflow.Selection{Action: "ai.process", ActionObjective: "Summarise", RequiredInputDocuments: []string{"docList:round1_step1_document_extract"},
					ParametersContext: `{"tone":"brief"}`, ParametersSchema: workflow.ParametersSchema{Fields: []workflow.FieldSpec{}}}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := ParseStage1(tt.reply, stage1Env())
			if len(res.Problems) > 0 {
				t.Fatalf("problems: %q", res.Problems)
			}
			w := want
			if tt.edit != nil {
				tt.edit(&w)
			}
			if diff := cmp.Diff(w, res.Selection); diff != "" {
				t.Errorf("Selection (-want +got):\n%s", diff)
			}
			if len(res.Parsed) == 0 {
				t.Error("Parsed is empty")
			}
		})
	}
}

func TestParseStage1Rejects(t *testing.T) {
	t.Parallel()
	swap := func(old, new string) string {
		if !strings.Contains(validStage1, old) {
			panic("fixture lacks " + old)
		}
		return strings.Replace(validStage1, old, new, 1)
	}
	tests := []struct {
		name  string
		reply string
		want  []string
	}{
		{"parameters key", swap(`"action":`, `"parameters": {"customer": "4711"}, "action":`),
			[]string{`the reply has a "parameters" key: Stage 1 must not fill parameter values; describe them in "parametersContext" and "parametersSchema" instead`}},
		{"unknown action", swap(`"crm.lookup"`, `"crm.find"`),
			[]string{`action "crm.find" is not a registered action; choose one of: ai.process, crm.lookup, document.extract, workflow.complete`}},
		{"action not a string", swap(`"crm.lookup"`, `["crm.lookup"]`),
			[]string{`"action" must be a string naming a registered action, got an array`}},
		{"action missing", swap(`"action": "crm.lookup",`, ``),
			[]string{`"action" is missing: name one registered action, e.g. "workflow.complete"`}},
		{"forbidden field", swap(`{"name": "customer"`, `{"name": "documentList", "type": "object"}, {"name": "customer"`),
			[]string{`parametersSchema.fields[0].name "documentList" is forbidden: documents and connections are chosen with "requiredInputDocuments" and "requiredConnection", never as parameters (forbidden: documentList, connectionReference, history, documents, connections)`}},
		{"every forbidden name", swap(`{"name": "customer"`, `{"name": "connectionReference", "type": "string"}, {"name": "history", "type": "string"}, {"name": "documents", "type": "object"}, {"name": "connections", "type": "object"}, {"name": "customer"`),
			[]string{`fields[0].name "connectionReference" is forbidden`, `fields[1].name "history" is forbidden`, `fields[2].name "documents" is forbidden`, `fields[3].name "connections" is forbidden`}},
		{"bad field type", swap(`"name": "customer", "type": "string"`, `"name": "region", "type": "date"`),
			[]string{`parametersSchema.fields[0] (region): type "date" is not one of string|number|integer|boolean|enum|object|array`}},
		{"bad array items", swap(`"name": "customer", "type": "string"`, `"name": "tags", "type": "array", "items": {"type": "date"}`),
			[]string{`parametersSchema.fields[0] (tags): "items" must be {"type": one of string|number|integer|boolean|object}`}},
		{"unregistered field by name", swap(`{"name": "customer", "type": "string", "required": true, "description": "CRM id"}`, `{"name": "customer"}, {"name": "region"}`),
			[]string{`parametersSchema field "region": crm.lookup does not register it, so it needs a "type" (one of string|number|integer|boolean|enum|object|array) and a "description"`}},
		{"unregistered field with a blank type", swap(`"name": "customer", "type": "string"`, `"name": "region", "type": " "`),
			[]string{`parametersSchema field "region": crm.lookup does not register it`}},
		{"another workflow's document", swap(`"docItem:doc_text:contract.txt"`, `"docItem:doc_x:x.pdf"`),
			[]string{`requiredInputDocuments[1]: document reference "docItem:doc_x:x.pdf": no document of this workflow has that id; copy a reference exactly from the documents index`}},
		{"another workflow's message", swap(`"docList:msg_r1u:round1_user_context"`, `"docList:msg_x:round1_user_context"`),
			[]string{`requiredInputDocuments[0]: document reference "docList:msg_x:round1_user_context": no message of this workflow has it`}},
		{"wrong file name", swap(`contract.txt"`, `contract.pdf"`),
			[]string{`requiredInputDocuments[1]: document reference "docItem:doc_text:contract.pdf": document doc_text is named "contract.txt", not "contract.pdf"`}},
		{"malformed reference", swap(`"docItem:doc_text:contract.txt"`, `"contract.txt"`),
			[]string{`requiredInputDocuments[1]: document reference "contract.txt": want docList:<messageId>:<label>`}},
		{"another user's connection", swap(`"crm-prod"`, `"bank"`),
			[]string{`requiredConnection: connection "bank" is not one of yours (available: crm-prod, erp-test)`}},
		{"connection missing", swap(`"crm-prod"`, `null`),
			[]string{`action "crm.lookup" needs a connection of kind "crm": set "requiredConnection" to one of: crm-prod`}},
		{"connection of the wrong kind", swap(`"crm-prod"`, `"erp-test"`),
			[]string{`connection "erp-test" is of kind "erp", but action "crm.lookup" uses kind "crm": set "requiredConnection" to one of: crm-prod`}},
		{"documents required", `{"action": "document.extract", "actionObjective": "x", "requiredInputDocuments": [], "parametersSchema": {"fields": []}}`,
			[]string{`action "document.extract" needs input documents: list them in "requiredInputDocuments"`}},
		{"learnings wrong type", swap(`["ACME's CRM id is 4711."]`, `{"a": 1}`),
			[]string{`"learnings" must be a list of strings, got an object`}},
		{"schema wrong shape", swap(`{"fields": [{"name": "customer", "type": "string", "required": true, "description": "CRM id"}]}`, `"customer"`),
			[]string{`"parametersSchema" must be {"fields": [{"name", "type", "required", "description"}, ...]}, got a string`}},
		{"not JSON", "I think we should look up the customer.", []string{"the reply contains no JSON value"}},
		{"array", `[{"action": "ai.process"}]`, []string{`the reply must be one JSON object`}},
		{"too large", validStage1 + strings.Repeat(" ", MaxReplyBytes), []string{"more than the limit of 65536"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := ParseStage1(tt.reply, stage1Env())
			if len(res.Problems) != len(tt.want) {
				t.Fatalf("got %d problems %q, want %d", len(res.Problems), res.Problems, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.Contains(res.Problems[i], w) {
					t.Errorf("problem %d =\n%s\nwant it to contain\n%s", i, res.Problems[i], w)
				}
			}
		})
	}
}

// TestParseStage1FieldsByName: a field the chosen action registers may be
// named alone (DESIGN §10.1); it takes its type and required flag from the
// action's schema and keeps no description of its own.
func TestParseStage1FieldsByName(t *testing.T) {
	t.Parallel()
	reply := `{"action": "ai.process", "actionObjective": "Summarise", "requiredInputDocuments": [], "requiredConnection": null,
		"parametersContext": "German, short", "parametersSchema": {"fields": [{"name": "instruction"}, {"name": "maxWords", "type": null},
		{"name": "language", "type": "string", "description": "German: de"}]}}`
	res := ParseStage1(reply, stage1Env())
	if len(res.Problems) > 0 {
		t.Fatalf("problems %q", res.Problems)
	}
	want := []workflow.FieldSpec{
		{Name: "instruction", Type: "string", Required: true},
		{Name: "maxWords", Type: "number"},
		{Name: "language", Type: "string", Description: "German: de"},
	}
	if diff := cmp.Diff(want, res.Selection.ParametersSchema.Fields); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
	if got := CheckAskedFields(map[string]any{"instruction": "x", "maxWords": 50}, aiProcess(), res.Selection.ParametersSchema.Fields); got != nil {
		t.Errorf("CheckAskedFields refused parameters of fields given by name: %q", got)
	}
}

// TestParseStage1JSONSchemaTypes (issue 45 item 1): a model that copies
// the action's JSON Schema writes "integer" or "array"; for a field the
// action registers the type is the action's whatever Stage 1 wrote, and a
// field it does not register may be an integer or an array of one type.
func TestParseStage1JSONSchemaTypes(t *testing.T) {
	t.Parallel()
	reply := `{"action": "ai.process", "actionObjective": "Summarise", "requiredInputDocuments": [], "requiredConnection": null,
		"parametersContext": "German, short", "parametersSchema": {"fields": [
		{"name": "instruction", "type": "integer", "required": true, "description": "what to do"},
		{"name": "maxWords", "type": {"type": "integer", "minimum": 1}, "required": false},
		{"name": "language", "type": ["string", "null"]}]}}`
	spec := workflow.ActionSpec{Name: "ai.process", Effect: workflow.EffectRead, Documents: workflow.DocumentsOptional,
		Parameters: json.RawMessage(`{"type":"object","properties":{"priority":{"type":"integer","minimum":1,"maximum":5}}}`)}
	res := ParseStage1(reply, stage1Env())
	if len(res.Problems) > 0 {
		t.Fatalf("registered fields with JSON Schema types: problems %q", res.Problems)
	}
	want := []workflow.FieldSpec{
		{Name: "instruction", Type: "string", Required: true, Description: "what to do"},
		{Name: "maxWords", Type: "number"},
		{Name: "language", Type: "string"},
	}
	if diff := cmp.Diff(want, res.Selection.ParametersSchema.Fields); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
	env := stage1Env()
	env.Registry = &fakeRegistry{specs: []workflow.ActionSpec{spec}}
	reply = `{"action": "ai.process", "actionObjective": "Rank", "requiredInputDocuments": [], "parametersSchema": {"fields": [
		{"name": "priority", "type": "integer", "required": true, "description": "1 to 5"},
		{"name": "count", "type": "integer", "description": "how many"},
		{"name": "tags", "type": "array", "items": {"type": "string"}, "description": "labels"},
		{"name": "ids", "type": "array", "items": "number"},
		{"name": "any", "type": "array"}]}}`
	res = ParseStage1(reply, env)
	if len(res.Problems) > 0 {
		t.Fatalf("integer and array fields: problems %q", res.Problems)
	}
	want = []workflow.FieldSpec{
		{Name: "priority", Type: "integer", Required: true, Description: "1 to 5"},
		{Name: "count", Type: "integer", Description: "how many"},
		{Name: "tags", Type: "array", Items: "string", Description: "labels"},
		{Name: "ids", Type: "array", Items: "number"},
		{Name: "any", Type: "array"},
	}
	if diff := cmp.Diff(want, res.Selection.ParametersSchema.Fields); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
}

func TestFeedback(t *testing.T) {
	t.Parallel()
	if got := Feedback(nil); got != "" {
		t.Errorf("Feedback(nil) = %q", got)
	}
	got := Feedback([]string{"a: b", "two\nlines"})
	want := "# Validation feedback\nYour previous reply was rejected. Fix every problem below and reply again with the corrected JSON only:\n- a: b\n- two lines"
	if got != want {
		t.Errorf("Feedback() =\n%s\nwant\n%s", got, want)
	}
}

// aiProcess is the fixture registry's ai.process.
func aiProcess() workflow.ActionSpec {
	spec, _ := newRegistry().Action("ai.process")
	return spec
}
