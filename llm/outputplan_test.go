package llm

import (
	"context"
	"testing"

	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/workflow"
)

// PlanOutput says, before the call, the mode Generate then sends the call
// with, for every way the mode is chosen; a Router asks its stage's model
// with the route's mode, and a model that cannot say plans text.
func TestPlanOutputMatchesGenerate(t *testing.T) {
	t.Parallel()
	srv := newRawServer(t, openAIReply(`{"action":"x"}`))
	loose := &workflow.OutputSchema{Name: "fill_parameters", Schema: strictSchema.Schema, NotStrict: "a pattern"}
	for _, tt := range []struct {
		name              string
		cfgMode, callMode workflow.OutputMode
		output            *workflow.OutputSchema
		json              bool
	}{
		{"default openai", "", "", strictSchema, true},
		{"configured json_schema", workflow.OutputJSONSchema, "", strictSchema, true},
		{"call override", workflow.OutputJSONSchema, workflow.OutputText, strictSchema, true},
		{"configured json_object", workflow.OutputJSONObject, "", strictSchema, true},
		{"no schema", "", "", nil, true},
		{"schema strict mode cannot take", "", "", loose, true},
	} {
		m := newTestModel(t, srv.srv.URL+"/v1", nil, func(c *Config) { c.OutputMode = tt.cfgMode })
		req := prompt("go")
		req.JSON, req.Output, req.OutputMode = tt.json, tt.output, tt.callMode
		planned := m.PlanOutput(req)
		resp, err := m.Generate(context.Background(), req)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if planned != resp.OutputMode {
			t.Errorf("%s: planned %q, sent %q", tt.name, planned, resp.OutputMode)
		}
	}
	m := newTestModel(t, srv.srv.URL+"/v1", nil, nil)
	req := prompt("go")
	req.JSON, req.Output = true, strictSchema
	r := NewRouter(Route{Name: "openai/a", Model: m}, map[workflow.Stage]Route{
		workflow.StageTwo:     {Name: "openai/b", Model: m, OutputMode: workflow.OutputJSONObject},
		workflow.StageCompact: {Name: "scripted/c", Model: scripted.New()},
	}, nil)
	for stage, want := range map[workflow.Stage]workflow.OutputMode{
		workflow.StageOne: workflow.OutputTool, workflow.StageTwo: workflow.OutputJSONObject, workflow.StageCompact: workflow.OutputText,
	} {
		req.Stage = stage
		if got := r.PlanOutput(req); got != want {
			t.Errorf("router, %s: planned %q, want %q", stage, got, want)
		}
	}
}
