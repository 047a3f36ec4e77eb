package prompts

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/twostep/twostep/workflow"
)

// goldenJSON compares an indented schema with testdata/name.golden.json.
func goldenJSON(t *testing.T, name string, raw json.RawMessage) {
	t.Helper()
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		t.Fatalf("%s is not JSON: %v\n%s", name, err, raw)
	}
	b.WriteByte('\n')
	path := filepath.Join("testdata", name+".golden.json")
	if *update {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./prompts -update)", err)
	}
	if diff := cmp.Diff(string(want), b.String()); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}

// compile compiles a generated schema with a real JSON Schema validator.
func compile(t *testing.T, raw json.RawMessage) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("schema.json")
	if err != nil {
		t.Fatalf("the generated schema does not compile: %v", err)
	}
	return s
}

func validates(t *testing.T, s *jsonschema.Schema, reply string) error {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(reply))
	if err != nil {
		t.Fatal(err)
	}
	return s.Validate(v)
}

// strictRules checks OpenAI's strict-mode rules on every object of a
// schema: every property required, additionalProperties false.
func strictRules(t *testing.T, path string, v any) {
	t.Helper()
	switch x := v.(type) {
	case map[string]any:
		if props, ok := x["properties"].(map[string]any); ok {
			req := stringSet(x["required"])
			for k := range props {
				if !req[k] {
					t.Errorf("%s: property %q is not required (strict mode needs every one)", path, k)
				}
			}
			if x["additionalProperties"] != false {
				t.Errorf("%s: additionalProperties = %v, want false", path, x["additionalProperties"])
			}
		}
		for k, sub := range x {
			strictRules(t, path+"."+k, sub)
		}
	case []any:
		for _, sub := range x {
			strictRules(t, path+"[]", sub)
		}
	}
}

func decode(t *testing.T, raw json.RawMessage) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestStage1OutputSchema(t *testing.T) {
	t.Parallel()
	reg := newRegistry()
	out := Stage1Output(reg.Actions(), reg.Connections("u1"))
	if out.Name != Stage1SchemaName || !out.Strict || out.NotStrict != "" {
		t.Fatalf("out = %+v, want a strict %s schema", out, Stage1SchemaName)
	}
	goldenJSON(t, "schema_stage1", out.Schema)
	strictRules(t, "stage1", decode(t, out.Schema))
	s := compile(t, out.Schema)
	ok := `{"action":"crm.lookup","actionObjective":"Find ACME","learnings":[],"requiredInputDocuments":["docItem:doc_text:contract.txt","docList:round1_user_context"],` +
		`"requiredConnection":"crm-prod","parametersContext":"ACME","parametersSchema":{"fields":[{"name":"customer","type":"string","items":null,"required":true,"description":"ACME"}]}}`
	if err := validates(t, s, ok); err != nil {
		t.Errorf("a valid reply fails the schema: %v", err)
	}
	for name, bad := range map[string]string{
		"unknown action":     strings.Replace(ok, `"crm.lookup"`, `"crm.find"`, 1),
		"foreign connection": strings.Replace(ok, `"crm-prod"`, `"bank"`, 1),
		"parameters key":     strings.Replace(ok, `{"action"`, `{"parameters":{"customer":"ACME"},"action"`, 1),
		"bad reference":      strings.Replace(ok, `"docItem:doc_text:contract.txt"`, `"contract.txt"`, 1),
		"bad field type":     strings.Replace(ok, `"type":"string"`, `"type":"date"`, 1),
		"missing key":        strings.Replace(ok, `"learnings":[],`, ``, 1),
	} {
		if err := validates(t, s, bad); err == nil {
			t.Errorf("%s: the schema accepts %s", name, bad)
		}
	}
	if err := validates(t, s, strings.Replace(ok, `"crm-prod"`, `null`, 1)); err != nil {
		t.Errorf("requiredConnection null must be allowed: %v", err)
	}
}

// A user without connections is not asked for one: the key is left out of
// the schema (and of the reply the model writes), and the reply still
// parses with no connection.
func TestStage1OutputWithoutConnectionsLeavesTheKeyOut(t *testing.T) {
	t.Parallel()
	reg := newRegistry()
	out := Stage1Output(reg.Actions(), nil)
	if strings.Contains(string(out.Schema), "requiredConnection") || !out.Strict {
		t.Errorf("strict %v, schema %s: want a strict schema without requiredConnection", out.Strict, out.Schema)
	}
	s := compile(t, out.Schema)
	reply := `{"action":"workflow.complete","actionObjective":"a","learnings":[],"requiredInputDocuments":[],%s"parametersContext":"","parametersSchema":{"fields":[]}}`
	without := strings.Replace(reply, "%s", "", 1)
	if err := validates(t, s, without); err != nil {
		t.Errorf("without requiredConnection: %v", err)
	}
	if err := validates(t, s, strings.Replace(reply, "%s", `"requiredConnection":"crm-prod",`, 1)); err == nil {
		t.Error("a connection label is accepted for a user with none")
	}
	if res := ParseStage1(without, Stage1Env{Registry: reg}); len(res.Problems) > 0 || res.Selection.RequiredConnection != "" {
		t.Errorf("ParseStage1 = %+v, %v: want no connection and no problem", res.Selection, res.Problems)
	}
}

func TestStage1OutputTooManyEnumValuesIsNotStrict(t *testing.T) {
	t.Parallel()
	var specs []workflow.ActionSpec
	for i := range maxStrictEnumValues + 1 {
		specs = append(specs, workflow.ActionSpec{Name: "a.n" + strings.Repeat("x", i%7) + string(rune('a'+i%26))})
	}
	out := Stage1Output(specs, nil)
	if out.Strict || !strings.Contains(out.NotStrict, "at most 500") || len(out.Schema) == 0 {
		t.Errorf("Strict %v, NotStrict %q: want a plain schema with the reason", out.Strict, out.NotStrict)
	}
}

// processFields are Stage 1's fields for ai.process: the required
// instruction and the optional language.
var processFields = []workflow.FieldSpec{
	{Name: "instruction", Type: "string", Required: true, Description: "Summarise the contract"},
	{Name: "language", Type: "string", Description: "German"},
}

func TestStage2OutputStrictAndMappedBack(t *testing.T) {
	t.Parallel()
	reg := newRegistry()
	spec, _ := reg.Action("ai.process")
	s2, err := NewStage2Output(spec, processFields)
	if err != nil {
		t.Fatal(err)
	}
	if !s2.Output.Strict || s2.Output.Name != Stage2SchemaName {
		t.Fatalf("Output = %+v, want strict", s2.Output)
	}
	goldenJSON(t, "schema_stage2_strict", s2.Output.Schema)
	strictRules(t, "stage2", decode(t, s2.Output.Schema))
	schema := compile(t, s2.Output.Schema)

	// The strict schema makes the model write the optional language as
	// null; FromNative drops it and the unchanged parser accepts the rest.
	native := `{"schema":"parameters_v1","parameters":{"instruction":"Summarise","language":null}}`
	if err := validates(t, schema, native); err != nil {
		t.Fatalf("strict reply fails the strict schema: %v", err)
	}
	mapped := s2.FromNative(native)
	if mapped != `{"parameters":{"instruction":"Summarise"},"schema":"parameters_v1"}` {
		t.Errorf("FromNative = %s", mapped)
	}
	if res := ParseStage2(mapped, spec, processFields, reg); len(res.Problems) > 0 || len(res.Parameters) != 1 {
		t.Errorf("mapped reply: %+v", res)
	}
	// Without the mapping the null is rejected, as in text mode.
	if res := ParseStage2(native, spec, processFields, reg); len(res.Problems) == 0 {
		t.Error("a null language is accepted without the mapping")
	}
	// A filled optional field round-trips unchanged.
	filled := `{"schema":"parameters_v1","parameters":{"instruction":"Summarise","language":"German"}}`
	if got := s2.FromNative(filled); got != filled {
		t.Errorf("FromNative changed a reply with nothing to drop: %s", got)
	}
	// A null for the required field stays and is rejected by validation.
	nullReq := `{"schema":"parameters_v1","parameters":{"instruction":null,"language":"German"}}`
	if got := s2.FromNative(nullReq); got != nullReq {
		t.Errorf("FromNative dropped a required field: %s", got)
	}
	if err := validates(t, schema, `{"schema":"parameters_v1","parameters":{"instruction":"x","language":null,"maxWords":3}}`); err == nil {
		t.Error("the schema accepts maxWords, which Stage 1 did not ask for")
	}
}

func TestStage2OutputNestedOptionalNullsAndNumbers(t *testing.T) {
	t.Parallel()
	spec := workflow.ActionSpec{Name: "tickets.create", Parameters: json.RawMessage(`{"type":"object","required":["title"],"additionalProperties":false,` +
		`"properties":{"title":{"type":"string","maxLength":80,"format":"uri"},"owner":{"type":"string","format":"email"},"count":{"type":"integer"},"meta":{"type":"object","required":["a"],` +
		`"properties":{"a":{"type":"string"},"b":{"type":"string","enum":["x","y"]}}}}}`)}
	asked := []workflow.FieldSpec{{Name: "count", Type: "number"}, {Name: "meta", Type: "object"}, {Name: "owner", Type: "string"}}
	s2, err := NewStage2Output(spec, asked)
	if err != nil {
		t.Fatal(err)
	}
	if !s2.Output.Strict {
		t.Fatalf("NotStrict: %s", s2.Output.NotStrict)
	}
	goldenJSON(t, "schema_stage2_nested", s2.Output.Schema)
	strictRules(t, "nested", decode(t, s2.Output.Schema))
	schema := compile(t, s2.Output.Schema)
	native := `{"schema":"parameters_v1","parameters":{"title":"t","count":12345678901234567,"meta":{"a":"1","b":null},"owner":null}}`
	if err := validates(t, schema, native); err != nil {
		t.Fatalf("native reply fails: %v", err)
	}
	want := `{"parameters":{"count":12345678901234567,"meta":{"a":"1"},"title":"t"},"schema":"parameters_v1"}`
	if got := s2.FromNative(native); got != want {
		t.Errorf("FromNative = %s, want %s (nested null dropped, the integer exact)", got, want)
	}
	// The uri format strict mode does not take is dropped (the action's
	// schema still checks it); email, which it takes, is kept.
	if s := string(s2.Output.Schema); strings.Contains(s, `"uri"`) || !strings.Contains(s, `"format":"email"`) {
		t.Errorf("formats in %s", s)
	}
}

// A parameter strict mode cannot express (a free-form map, oneOf, no
// type) gives the plain schema with the reason, never a wrong strict one.
func TestStage2OutputInexpressibleIsNotStrict(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, prop, reason string }{
		{"free-form map", `{"type":"object","additionalProperties":{"type":"string"}}`, "parameters.query is an object with no declared properties"},
		{"oneOf", `{"oneOf":[{"type":"string"},{"type":"number"}]}`, `parameters.query uses "oneOf"`},
		{"no type", `{"description":"anything"}`, "parameters.query has no type"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			spec := workflow.ActionSpec{Name: "http.get", Parameters: json.RawMessage(`{"type":"object","required":["path"],"additionalProperties":false,` +
				`"properties":{"path":{"type":"string"},"query":` + tt.prop + `}}`)}
			s2, err := NewStage2Output(spec, []workflow.FieldSpec{{Name: "query", Type: "object"}})
			if err != nil {
				t.Fatal(err)
			}
			if s2.Output.Strict || !strings.Contains(s2.Output.NotStrict, tt.reason) || !strings.HasPrefix(s2.Output.NotStrict, "action http.get: ") {
				t.Errorf("Strict %v, NotStrict %q, want the reason %q", s2.Output.Strict, s2.Output.NotStrict, tt.reason)
			}
			s := compile(t, s2.Output.Schema)
			if err := validates(t, s, `{"schema":"parameters_v1","parameters":{"path":"/x"}}`); err != nil {
				t.Errorf("plain schema: the optional query must be omittable: %v", err)
			}
			if tt.name == "free-form map" {
				goldenJSON(t, "schema_stage2_plain", s2.Output.Schema)
			}
		})
	}
}

// marshal writes what encoding/json writes (without HTML escaping), in
// the members' order.
func TestMarshalMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	v := object{{"z", "a \"quoted\" \\ <tag> & \n\t\x01 é \xff"}, {"a", []any{1.5, json.Number("12345678901234567"), nil, true, false}},
		{"m", map[string]any{"b": []string{"x"}, "a": json.RawMessage(`{"k":1}`)}}, {"o", object{}}}
	got, err := marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"z":"a \"quoted\" \\ <tag> & \n\t\u0001 é ` + "\ufffd" + `","a":[1.5,12345678901234567,null,true,false],"m":{"a":{"k":1},"b":["x"]},"o":{}}`
	if string(got) != want {
		t.Errorf("marshal = %s\nwant      %s", got, want)
	}
	if !json.Valid(got) {
		t.Error("not valid JSON")
	}
	var back map[string]any
	if err := json.Unmarshal(got, &back); err != nil || back["z"] != "a \"quoted\" \\ <tag> & \n\t\x01 é \ufffd" {
		t.Errorf("round trip: %v %q", err, back["z"])
	}
}

// The Builder's Stage2Output builds exactly NewStage2Output's schema.
func TestBuilderStage2OutputMatchesNewStage2Output(t *testing.T) {
	t.Parallel()
	b := newBuilder(t, 0)
	spec, _ := newRegistry().Action("ai.process")
	in := Stage2Input{Selection: workflow.Selection{Action: "ai.process", ActionObjective: "o", ParametersContext: "c",
		ParametersSchema: workflow.ParametersSchema{Fields: processFields}}, Action: spec, Feedback: "fix it"}
	out, err := b.Stage2Output(in)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := NewStage2Output(spec, processFields)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(s2.Output, out.Output); diff != "" {
		t.Errorf("output (-NewStage2Output +Stage2Output):\n%s", diff)
	}
}

// The Builder's Stage1Output is the package-level one, cached by the
// action names and connection labels.
func TestBuilderStage1OutputCached(t *testing.T) {
	t.Parallel()
	b := newBuilder(t, 0)
	reg := newRegistry()
	first := b.Stage1Output(reg.Actions(), reg.Connections("u1"))
	if diff := cmp.Diff(Stage1Output(reg.Actions(), reg.Connections("u1")), first); diff != "" {
		t.Errorf("cached schema differs (-want +got):\n%s", diff)
	}
	other := b.Stage1Output(reg.Actions(), reg.Connections("u2"))
	if !strings.Contains(string(other.Schema), `"bank"`) || strings.Contains(string(other.Schema), `"crm-prod"`) {
		t.Errorf("u2's schema offers the wrong connections: %s", other.Schema)
	}
	if again := b.Stage1Output(reg.Actions(), reg.Connections("u1")); &again.Schema[0] != &first.Schema[0] {
		t.Error("the second call rebuilt the schema")
	}
}

// Stage2Output's schema is cached by action name and schema text: a
// repeated call gets the same schema, and an action re-registered under the
// same name with another schema gets its own.
func TestStage2OutputCached(t *testing.T) {
	t.Parallel()
	b := newBuilder(t, 0)
	spec, _ := newRegistry().Action("ai.process")
	in := Stage2Input{Selection: workflow.Selection{Action: "ai.process", ParametersSchema: workflow.ParametersSchema{Fields: processFields}}, Action: spec}
	first, err := b.Stage2Output(in)
	if err != nil {
		t.Fatal(err)
	}
	again, err := b.Stage2Output(in)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first.Output, again.Output); diff != "" {
		t.Errorf("repeated call (-first +again):\n%s", diff)
	}
	in.Action.Parameters = json.RawMessage(`{"type":"object","properties":{"instruction":{"type":"string","enum":["a","b"]}},"required":["instruction"],"additionalProperties":false}`)
	changed, err := b.Stage2Output(in)
	if err != nil {
		t.Fatal(err)
	}
	want, err := NewStage2Output(in.Action, processFields)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.Output, changed.Output); diff != "" || !strings.Contains(string(changed.Output.Schema), `"enum"`) {
		t.Errorf("same name, other schema (-want +got):\n%s", diff)
	}
}
