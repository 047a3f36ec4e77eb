package prompts

// The Stage 1 parser as it was before it decoded each reply once: the
// reference the single-decode parser must agree with on every reply
// (TestParseStage1MatchesReference, FuzzParseStage1MatchesReference).

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/twostep/twostep/textclip"
	"github.com/twostep/twostep/workflow"
)

func parseStage1Ref(reply string, env Stage1Env) Stage1Result {
	raw, err := ExtractObject(reply)
	if err != nil {
		return Stage1Result{Problems: []string{workflow.PublicMessage(err)}}
	}
	res := Stage1Result{Parsed: raw}
	obj, err := decodeObjectRef(raw)
	if err != nil {
		res.Problems = []string{err.Error()}
		return res
	}
	p := &problems{}
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		// Any case: a decoder downstream would take "Parameters" for it.
		if strings.EqualFold(k, "parameters") {
			p.add(`the reply has a %q key: Stage 1 must not fill parameter values; describe them in "parametersContext" and "parametersSchema" instead`, textclip.ClipRunes(k, maxQuoted))
		}
	}
	sel := &res.Selection
	spec, known := parseActionRef(obj, env.Registry, sel, p)
	sel.ActionObjective = textMemberRef(obj, "actionObjective", p)
	sel.ParametersContext = contextMemberRef(obj)
	sel.Learnings = stringListRef(obj, "learnings", p)
	sel.RequiredInputDocuments = stringListRef(obj, "requiredInputDocuments", p)
	types := newFieldTypes(spec, known)
	sel.ParametersSchema.Fields = parseFieldsRef(obj["parametersSchema"], types, p)
	resolveNamedFields(sel.ParametersSchema.Fields, types, p)
	sel.RequiredConnection = connectionMemberRef(obj, p)
	checkInputs(sel, env, spec, known, p)
	res.Problems = p.lines
	return res
}

func parseActionRef(obj map[string]json.RawMessage, reg workflow.Registry, sel *workflow.Selection, p *problems) (workflow.ActionSpec, bool) {
	raw, ok := obj["action"]
	if !ok {
		p.add(`"action" is missing: name one registered action, e.g. %q`, workflow.CompleteAction)
		return workflow.ActionSpec{}, false
	}
	var name string
	if json.Unmarshal(raw, &name) != nil {
		p.add(`"action" must be a string naming a registered action, got %s`, JSONKind(raw))
		return workflow.ActionSpec{}, false
	}
	sel.Action = name
	if reg == nil {
		p.add(`action %q is not a registered action`, textclip.ClipRunes(name, maxQuoted))
		return workflow.ActionSpec{}, false
	}
	spec, ok := reg.Action(name)
	if !ok {
		p.add(`action %q is not a registered action; choose one of: %s`, textclip.ClipRunes(name, maxQuoted), actionNames(reg))
		return workflow.ActionSpec{}, false
	}
	return spec, true
}

func textMemberRef(obj map[string]json.RawMessage, key string, p *problems) string {
	raw, ok := obj[key]
	if !ok || isNullRef(raw) {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		p.add(`%q must be a string, got %s`, key, JSONKind(raw))
	}
	return s
}

func contextMemberRef(obj map[string]json.RawMessage) string {
	raw, ok := obj["parametersContext"]
	if !ok || isNullRef(raw) {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

func stringListRef(obj map[string]json.RawMessage, key string, p *problems) []string {
	raw, ok := obj[key]
	if !ok || isNullRef(raw) {
		return nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		if strings.TrimSpace(one) == "" {
			return nil
		}
		return []string{one}
	}
	var list []string
	if json.Unmarshal(raw, &list) != nil {
		p.add(`%q must be a list of strings, got %s`, key, JSONKind(raw))
		return nil
	}
	return list
}

func connectionMemberRef(obj map[string]json.RawMessage, p *problems) string {
	return strings.TrimSpace(textMemberRef(obj, "requiredConnection", p))
}

func isNullRef(raw json.RawMessage) bool {
	return strings.TrimSpace(string(raw)) == "null"
}

func parseFieldsRef(raw json.RawMessage, types *fieldTypes, p *problems) []workflow.FieldSpec {
	if len(raw) == 0 || isNullRef(raw) {
		return nil
	}
	var wrapper struct {
		Fields json.RawMessage `json:"fields"`
	}
	list := raw
	if json.Unmarshal(raw, &wrapper) == nil {
		list = wrapper.Fields
		if len(list) == 0 || isNullRef(list) {
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
		if f, ok := parseFieldRef(i, item, types, p); ok {
			fields = append(fields, f)
		}
	}
	return fields
}

func parseFieldRef(i int, item json.RawMessage, types *fieldTypes, p *problems) (workflow.FieldSpec, bool) {
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
	if !types.judge(i, &f, rf.Type, rf.Items, p) {
		ok = false
	}
	if len(rf.Required) > 0 && !isNullRef(rf.Required) && json.Unmarshal(rf.Required, &f.Required) != nil {
		p.add(`parametersSchema.fields[%d] (%s): "required" must be true or false`, i, textclip.ClipRunes(f.Name, maxQuoted))
		ok = false
	}
	if len(rf.Description) > 0 && !isNullRef(rf.Description) && json.Unmarshal(rf.Description, &f.Description) != nil {
		p.add(`parametersSchema.fields[%d] (%s): "description" must be a string`, i, textclip.ClipRunes(f.Name, maxQuoted))
		ok = false
	}
	return f, ok
}

func decodeObjectRef(raw json.RawMessage) (map[string]json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, fmt.Errorf("the reply must be one JSON object, got %s", JSONKind(raw))
	}
	return obj, nil
}

// rawField is a parametersSchema field as the model wrote it.
type rawField struct {
	Name        json.RawMessage `json:"name"`
	Type        json.RawMessage `json:"type"`
	Items       json.RawMessage `json:"items"`
	Required    json.RawMessage `json:"required"`
	Description json.RawMessage `json:"description"`
}

// stage1Replies are replies that take every branch of the Stage 1 parser:
// escapes, invalid UTF-8, case variants and duplicates of keys, null and
// wrongly typed members, bare field lists and malformed fields.
var stage1Replies = []string{
	validStage1,
	"```json\n" + validStage1 + "\n```",
	`{"action": 1, "parameters": {}}`,
	`{"action": null, "Parameters": 1, "PARAMETERS": 2, "parameters": 3}`,
	`{"action": "crm.lookup", "action": "ai.process", "actionObjective": "a\u00e9\n\"q\"", "learnings": "one"}`,
	`{"action": "ai.process", "learnings": "  ", "requiredInputDocuments": null, "requiredConnection": null}`,
	`{"action": "ai.process", "learnings": [], "requiredInputDocuments": [null, "docItem:doc_text:contract.txt"]}`,
	`{"action": "ai.process", "learnings": ["a", 1], "requiredInputDocuments": {"a": 1}}`,
	`{"action": "ai.process", "parametersContext": {"b": 1, "a": "<x>"}, "actionObjective": 7}`,
	`{"action": "ai.process", "parametersContext": "ctx \u2028 \ud83d\ude00", "actionObjective": null}`,
	"{\"action\": \"ai.pro\xffcess\", \"actionObjective\": \"bad \xfe utf8\"}",
	`{"act\u0069on": "ai.process", "parametersSchema": [{"name": "instruction", "type": "string"}]}`,
	`{"action": "ai.process", "parametersSchema": {"Fields": [{"NAME": "instruction", "Type": "string", "REQUIRED": true}], "fields": null}}`,
	`{"action": "ai.process", "parametersSchema": {"fields": [{"name": "x", "type": "string"}], "FIELDS": 5}}`,
	`{"action": "ai.process", "parametersSchema": {"other": 1}}`,
	`{"action": "ai.process", "parametersSchema": "fields"}`,
	`{"action": "ai.process", "parametersSchema": {"fields": [null, 1, "x", {"name": ""}, {"name": "documents", "type": "list"}, {"name": "a", "type": null}, {"name": "b"}, {"name": "c", "type": "enum", "required": "yes", "description": 3}, {"name": "d", "type": "number", "required": null, "description": null}, {"name": "e", "type": "boolean", "required": false, "description": "ok", "name": "f"}]}}`,
	`{"action": "crm.lookup", "parametersSchema": {"fields": [{"name": "customer", "type": "string", "required": true, "description": "Customer\tid"}]}, "requiredConnection": " crm-prod "}`,
	`{"action": "crm.lookup", "requiredConnection": 5}`,
	`{"action": "crm.lookup", "requiredConnection": "someone-elses"}`,
	`{"action": "ai.process",}`,
	`{'action': 'ai.process', "learnings": ["x",],}`,
	`{}`,
	`[{"action": "ai.process"}]`,
	`no json here`,
	"",
}

func TestParseStage1MatchesReference(t *testing.T) {
	t.Parallel()
	env := stage1Env()
	for _, reply := range stage1Replies {
		if diff := cmp.Diff(parseStage1Ref(reply, env), ParseStage1(reply, env)); diff != "" {
			t.Errorf("ParseStage1(%q) (-reference +got):\n%s", reply, diff)
		}
	}
}

func FuzzParseStage1MatchesReference(f *testing.F) {
	for _, s := range stage1Replies {
		f.Add(s)
	}
	env := stage1Env()
	f.Fuzz(func(t *testing.T, reply string) {
		if diff := cmp.Diff(parseStage1Ref(reply, env), ParseStage1(reply, env)); diff != "" {
			t.Fatalf("ParseStage1(%q) (-reference +got):\n%s", reply, diff)
		}
	})
}

func BenchmarkParseStage1(b *testing.B) {
	env := stage1Env()
	b.ReportAllocs()
	for b.Loop() {
		if res := ParseStage1(validStage1, env); len(res.Problems) > 0 {
			b.Fatal(res.Problems)
		}
	}
}
