package inspect

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/templates"
	"github.com/twostep/twostep/workflow"
)

// reader is a Reader over one workflow held in memory.
type reader struct {
	wf     *workflow.Workflow
	msgs   []workflow.Message
	traces []workflow.Trace
}

func (r *reader) GetWorkflow(_ context.Context, id string) (*workflow.Workflow, error) {
	if r.wf == nil || id != r.wf.ID {
		return nil, workflow.Errorf(workflow.KindNotFound, "workflow %q not found", id)
	}
	return r.wf, nil
}

func (r *reader) Messages(context.Context, string, int64, int) ([]workflow.Message, error) {
	return r.msgs, nil
}

func (r *reader) Traces(context.Context, string) ([]workflow.Trace, error) { return r.traces, nil }

// fixture returns an Inspector over a workflow of alice (round 1, step 2)
// with one user message, and the reader to change its state.
func fixture(t *testing.T, offered func(string, []workflow.ActionSpec) []workflow.ActionSpec) (*Inspector, *reader) {
	t.Helper()
	set, err := templates.Load("")
	if err != nil {
		t.Fatal(err)
	}
	reg := enginetest.NewRegistry()
	reg.Conns = map[string][]workflow.Connection{"alice": {{Label: "crm", Kind: "http", Description: "the CRM"}}}
	r := &reader{
		wf: &workflow.Workflow{ID: "wf_1", UserID: "alice", Mode: workflow.ModeReact, Round: 1, Step: 2, MaxSteps: 5},
		msgs: []workflow.Message{{ID: "msg_1", WorkflowID: "wf_1", Seq: 1, Round: 1, Role: workflow.RoleUser,
			Text: "echo the word hello"}},
	}
	return New(Options{Reader: r, Registry: reg, Prompts: prompts.NewBuilder(set, prompts.Options{}), Offered: offered}), r
}

func content(p []workflow.PromptMessage) string {
	var b strings.Builder
	for _, m := range p {
		b.WriteString(m.Content)
		b.WriteByte('\n')
	}
	return b.String()
}

func TestRenderStage1CarriesFeedbackAndOverride(t *testing.T) {
	t.Parallel()
	in, r := fixture(t, nil)
	got, err := in.Render(context.Background(), r.wf, workflow.StageOne, nil, []string{"the action is unknown"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Template != "stage1" || got.Selection != nil || got.Source != "" {
		t.Errorf("template %q selection %v source %q, want stage1 and no selection", got.Template, got.Selection, got.Source)
	}
	text := content(got.Prompt)
	for _, want := range []string{"the action is unknown", "echo the word hello", enginetest.Echo, "crm"} {
		if !strings.Contains(text, want) {
			t.Errorf("stage1 prompt lacks %q:\n%s", want, text)
		}
	}
	if !strings.Contains(got.Placeholders["VALIDATION_FEEDBACK"], "the action is unknown") {
		t.Errorf("VALIDATION_FEEDBACK = %q", got.Placeholders["VALIDATION_FEEDBACK"])
	}

	override, err := Template(workflow.StageOne, "--- user ---\nONLY {{KEY:USER_PROMPT}}\n")
	if err != nil {
		t.Fatalf("Template: %v", err)
	}
	got, err = in.Render(context.Background(), r.wf, workflow.StageOne, &override, nil)
	if err != nil {
		t.Fatal(err)
	}
	if text := content(got.Prompt); !strings.Contains(text, "ONLY echo the word hello") || strings.Contains(text, enginetest.Remote) {
		t.Errorf("override not rendered alone:\n%s", text)
	}
}

func TestTemplateAppliesTheStageKeyRules(t *testing.T) {
	t.Parallel()
	// Stage 2 can never be given the history, whatever the override says.
	if _, err := Template(workflow.StageTwo, "--- user ---\n{{KEY:WORKFLOW_HISTORY}}\n"); err == nil {
		t.Fatal("a stage2 override with the history was accepted")
	}
	if _, err := Template(workflow.StageOne, "--- user ---\n{{KEY:WORKFLOW_HISTORY}}\n"); err != nil {
		t.Fatalf("a stage1 override with the history was refused: %v", err)
	}
}

func TestRenderPlanOffersOnlyTheOfferedActions(t *testing.T) {
	t.Parallel()
	var gotPrompt string
	in, r := fixture(t, func(prompt string, all []workflow.ActionSpec) []workflow.ActionSpec {
		gotPrompt = prompt
		i := slices.IndexFunc(all, func(a workflow.ActionSpec) bool { return a.Name == enginetest.Echo })
		return all[i : i+1]
	})
	got, err := in.Render(context.Background(), r.wf, workflow.StagePlan, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if gotPrompt != "echo the word hello" {
		t.Errorf("Offered was given prompt %q, want the round's user prompt", gotPrompt)
	}
	methods := got.Placeholders["AVAILABLE_METHODS"]
	if !strings.Contains(methods, enginetest.Echo) || strings.Contains(methods, enginetest.Remote) {
		t.Errorf("AVAILABLE_METHODS is not the offered subset:\n%s", methods)
	}
	if got.Template != "plan" || !strings.Contains(content(got.Prompt), enginetest.Echo) {
		t.Errorf("template %q, prompt:\n%s", got.Template, content(got.Prompt))
	}
}

func TestRenderStage2FindsTheSelection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	in, r := fixture(t, nil)

	// No source at all: a conflict that says what to do instead.
	_, err := in.Render(ctx, r.wf, workflow.StageTwo, nil, nil)
	if workflow.KindOf(err) != workflow.KindConflict || !strings.Contains(err.Error(), "render stage1 instead") {
		t.Fatalf("no selection: err %v, want a conflict", err)
	}

	// The last action message: partial.
	r.msgs = append(r.msgs, workflow.Message{ID: "msg_2", Round: 1, Step: 1, Role: workflow.RoleAction,
		Action: enginetest.Echo, ActionObjective: "echo from the message", Text: "done"})
	got, err := in.Render(ctx, r.wf, workflow.StageTwo, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got.Source, "message msg_2 (partial") || got.Selection.ActionObjective != "echo from the message" {
		t.Errorf("source %q selection %+v, want the action message's", got.Source, got.Selection)
	}

	// An accepted Stage 1 trace wins over the message; a rejected one is skipped.
	r.traces = []workflow.Trace{
		{ID: "tr_1", WorkflowID: "wf_1", Round: 1, Step: 1, Stage: workflow.StageOne,
			Response: enginetest.Select(enginetest.Echo, "echo from the trace", nil, "", "text")},
		{ID: "tr_2", WorkflowID: "wf_1", Round: 1, Step: 2, Stage: workflow.StageOne, Error: "rejected",
			Response: enginetest.Select(enginetest.Echo, "rejected one", nil, "", "text")},
	}
	got, err = in.Render(ctx, r.wf, workflow.StageTwo, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Source != "trace tr_1" || got.Selection.ActionObjective != "echo from the trace" {
		t.Errorf("source %q selection %+v, want trace tr_1's", got.Source, got.Selection)
	}
	if !strings.Contains(content(got.Prompt), "context for echo from the trace") {
		t.Errorf("stage2 prompt lacks the trace's parametersContext:\n%s", content(got.Prompt))
	}

	// The checkpoint past Stage 1 wins over everything.
	r.wf.Checkpoint = &workflow.Checkpoint{Phase: workflow.PhaseParameterize,
		Selection: &workflow.Selection{Action: enginetest.Echo, ActionObjective: "echo from the checkpoint"}}
	sel, source, err := in.Selection(ctx, r.wf)
	if err != nil || source != "checkpoint" || sel.ActionObjective != "echo from the checkpoint" {
		t.Errorf("Selection = %+v, %q, %v; want the checkpoint's", sel, source, err)
	}

	// A selected action no longer registered cannot be rendered.
	r.wf.Checkpoint.Selection.Action = "gone.action"
	if _, err := in.Render(ctx, r.wf, workflow.StageTwo, nil, nil); workflow.KindOf(err) != workflow.KindConflict ||
		!strings.Contains(err.Error(), "gone.action") {
		t.Errorf("unregistered action: err %v, want a conflict naming it", err)
	}
}

func TestRenderRefusesOtherStages(t *testing.T) {
	t.Parallel()
	in, r := fixture(t, nil)
	if _, err := in.Render(context.Background(), r.wf, workflow.StageRepair, nil, nil); workflow.KindOf(err) != workflow.KindInvalid {
		t.Errorf("repair render: err %v, want invalid", err)
	}
}

func TestReplayCallAndParseStage1(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	in, _ := fixture(t, nil)
	tr := workflow.Trace{ID: "tr_1", WorkflowID: "wf_1", Round: 1, Step: 2, Stage: workflow.StageOne}
	call := in.ReplayCall(ctx, tr)
	if !call.JSON || call.Output == nil || call.Output.Name != prompts.Stage1SchemaName {
		t.Fatalf("stage1 call %+v, want JSON mode and the select_action schema", call)
	}
	if !strings.Contains(string(call.Output.Schema), `"crm"`) {
		t.Errorf("stage1 schema does not offer alice's connection: %s", call.Output.Schema)
	}

	ok, err := in.ParseReply(ctx, tr, enginetest.Select(enginetest.Echo, "echo", nil, "", "text"))
	if err != nil || ok.Error != "" || !strings.Contains(string(ok.Parsed), `"echo"`) {
		t.Errorf("accepted reply: %+v, %v", ok, err)
	}
	bad, err := in.ParseReply(ctx, tr, enginetest.Select("no.such", "x", nil, "", "text"))
	if err != nil || !strings.Contains(bad.Error, "no.such") {
		t.Errorf("unknown action: %+v, %v; want a rejection naming it", bad, err)
	}
}

func TestReplayCallAndParseStage2MapNativeReplies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	in, r := fixture(t, nil)
	tr := workflow.Trace{ID: "tr_2", WorkflowID: "wf_1", Round: 1, Step: 2, Stage: workflow.StageTwo}

	// Without a selection for the step: JSON only, and a note.
	call := in.ReplayCall(ctx, tr)
	if !call.JSON || call.Output != nil {
		t.Fatalf("stage2 call without a selection: %+v, want JSON only", call)
	}
	p, err := in.ParseReply(ctx, tr, `{"schema": "parameters_v1", "parameters": {"text": 1}}`)
	if err != nil || p.Note == "" || p.Error != "" || p.Parsed == nil {
		t.Errorf("unvalidated stage2 parse: %+v, %v", p, err)
	}

	// With the step's selection (asking for the optional "message" too):
	// the strict schema lets the model write null for it, and Reply maps
	// that back for a native mode only.
	r.wf.Checkpoint = &workflow.Checkpoint{Phase: workflow.PhaseParameterize, Selection: &workflow.Selection{
		Action: enginetest.Echo, ParametersSchema: workflow.ParametersSchema{Fields: []workflow.FieldSpec{
			{Name: "text", Type: "string", Required: true}, {Name: "message", Type: "string"}}}}}
	call = in.ReplayCall(ctx, tr)
	if call.Output == nil || call.Output.Name != prompts.Stage2SchemaName {
		t.Fatalf("stage2 call %+v, want the fill_parameters schema", call)
	}
	native := `{"schema":"parameters_v1","parameters":{"text":"hi","message":null}}`
	if got := call.Reply(native, workflow.OutputText); got != native {
		t.Errorf("a text-mode reply was changed: %s", got)
	}
	mapped := call.Reply(native, workflow.OutputTool)
	var v struct{ Parameters map[string]any }
	if err := json.Unmarshal([]byte(mapped), &v); err != nil || len(v.Parameters) != 1 || v.Parameters["text"] != "hi" {
		t.Fatalf("native reply mapped to %s, want the null optional dropped", mapped)
	}
	p, err = in.ParseReply(ctx, tr, mapped)
	if err != nil || p.Error != "" || p.Note != "" {
		t.Errorf("mapped reply: %+v, %v; want accepted", p, err)
	}
	// A value in neither the objective nor the context is listed, as the
	// engine's trace lists it; "hi" is too short to judge.
	r.wf.Checkpoint.Selection.ActionObjective, r.wf.Checkpoint.Selection.ParametersContext = "Greet the team.", "Say hello to the team."
	for reply, want := range map[string][]string{
		`{"schema":"parameters_v1","parameters":{"text":"hello to the team"}}`: nil,
		`{"schema":"parameters_v1","parameters":{"text":"Goodbye"}}`:           {"text"},
	} {
		if p, err := in.ParseReply(ctx, tr, reply); err != nil || p.Error != "" || !cmp.Equal(p.Ungrounded, want) {
			t.Errorf("%s: %+v, %v; want accepted with ungrounded %q", reply, p, err, want)
		}
	}
	p, err = in.ParseReply(ctx, tr, `{"schema":"parameters_v1","parameters":{}}`)
	if err != nil || !strings.Contains(p.Error, "text") {
		t.Errorf("missing required text: %+v, %v; want a rejection naming it", p, err)
	}
}

func TestReplayOtherStages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	in, _ := fixture(t, nil)
	plan := workflow.Trace{ID: "tr_3", WorkflowID: "wf_1", Stage: workflow.StagePlan}
	if call := in.ReplayCall(ctx, plan); call.JSON || call.Output != nil {
		t.Errorf("plan call %+v: a plan is an array, no JSON object mode", call)
	}
	p, err := in.ParseReply(ctx, plan, "here: [{\"action\": \"test.echo\"}]")
	if err != nil || p.Note == "" || string(p.Parsed) != `[{"action":"test.echo"}]` {
		t.Errorf("plan parse: %+v (parsed %s), %v", p, p.Parsed, err)
	}
	p, err = in.ParseReply(ctx, plan, "no json at all")
	if err != nil || p.Error == "" || p.Parsed != nil {
		t.Errorf("plan parse without JSON: %+v, %v; want an error line", p, err)
	}
	action := workflow.Trace{ID: "tr_4", WorkflowID: "wf_1", Stage: workflow.StageAction}
	p, err = in.ParseReply(ctx, action, "prose")
	if err != nil || p.Note == "" || p.Parsed != nil || p.Error != "" {
		t.Errorf("action parse: %+v, %v; want a note only", p, err)
	}
	gone := workflow.Trace{ID: "tr_5", WorkflowID: "wf_gone", Stage: workflow.StageOne}
	if call := in.ReplayCall(ctx, gone); call.Output != nil || !call.JSON {
		t.Errorf("call of a missing workflow %+v, want JSON only", call)
	}
	if _, err := in.ParseReply(ctx, gone, "{}"); workflow.KindOf(err) != workflow.KindNotFound {
		t.Errorf("parse of a missing workflow: err %v, want not found", err)
	}
}

// bobsTool is a registry with one action of bob's own (a per-user MCP
// server's tool): the whole registry lists it, bob's view too, anyone
// else's view does not.
type bobsTool struct {
	workflow.Registry
	tool workflow.ActionSpec
}

func (r bobsTool) Actions() []workflow.ActionSpec { return append(r.Registry.Actions(), r.tool) }

func (r bobsTool) Action(name string) (workflow.ActionSpec, bool) {
	if name == r.tool.Name {
		return r.tool, true
	}
	return r.Registry.Action(name)
}

func (r bobsTool) ForUser(userID string) workflow.Registry {
	if userID == "bob" {
		return r
	}
	return r.Registry
}

// TestReplayUsesTheUsersView: replaying alice's Stage 1 call neither offers
// nor accepts bob's own tool, as her rounds do not.
func TestReplayUsesTheUsersView(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	in, _ := fixture(t, nil)
	in.registry = bobsTool{Registry: in.registry, tool: workflow.ActionSpec{Name: "mcp.bobs.secret", Description: "bob's tool",
		Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}}
	tr := workflow.Trace{ID: "tr_1", WorkflowID: "wf_1", Round: 1, Step: 2, Stage: workflow.StageOne}
	call := in.ReplayCall(ctx, tr)
	if call.Output == nil || strings.Contains(string(call.Output.Schema), "mcp.bobs.secret") {
		t.Errorf("alice's replay schema offers bob's tool: %+v", call.Output)
	}
	got, err := in.ParseReply(ctx, tr, enginetest.Select("mcp.bobs.secret", "use it", nil, ""))
	if err != nil || !strings.Contains(got.Error, "mcp.bobs.secret") {
		t.Errorf("alice's reply choosing bob's tool: %+v, %v; want a rejection naming it", got, err)
	}
}

// toolModel plans a forced tool for every call with a schema.
type toolModel struct{ workflow.ModelFunc }

func (toolModel) PlanOutput(req workflow.ModelRequest) workflow.OutputMode {
	if req.Output != nil {
		return workflow.OutputTool
	}
	return workflow.OutputText
}

// A render shows the prompt the engine would send with the gateway's
// model: without the reply's shape when that model gives it natively.
func TestRenderStage1LeavesTheShapeToANativeModel(t *testing.T) {
	t.Parallel()
	const shape = `"parametersSchema": {"fields": [{"name": "x"}]}`
	in, r := fixture(t, nil)
	text, err := in.Render(context.Background(), r.wf, workflow.StageOne, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	in.model = toolModel{}
	native, err := in.Render(context.Background(), r.wf, workflow.StageOne, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(content(text.Prompt), shape) || strings.Contains(content(native.Prompt), shape) {
		t.Errorf("shape in the text render %v, in the native render %v; want true, false",
			strings.Contains(content(text.Prompt), shape), strings.Contains(content(native.Prompt), shape))
	}
}
