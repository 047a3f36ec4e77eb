package llm_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/modes/react"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/templates"
	"github.com/twostep/twostep/workflow"
)

// The four replies of a round: echo "hello" (Stage 1 asks for the
// required text and the optional message; Stage 2 leaves message null, as
// strict mode makes a model do), then complete with "done".
var roundReplies = []struct {
	schema string
	args   string
}{
	{prompts.Stage1SchemaName, `{"action":"test.echo","actionObjective":"echo hello","learnings":[],"requiredInputDocuments":[],` +
		`"requiredConnection":null,"parametersContext":"say hello","parametersSchema":{"fields":[` +
		`{"name":"text","type":"string","required":true,"description":"what to echo"},` +
		`{"name":"message","type":"string","required":false,"description":"an optional note"}]}}`},
	{prompts.Stage2SchemaName, `{"schema":"parameters_v1","parameters":{"text":"hello","message":null}}`},
	{prompts.Stage1SchemaName, `{"action":"workflow.complete","actionObjective":"answer","learnings":["echoed"],"requiredInputDocuments":[],` +
		`"requiredConnection":null,"parametersContext":"the echo worked","parametersSchema":{"fields":[` +
		`{"name":"message","type":"string","required":true,"description":"the answer"}]}}`},
	{prompts.Stage2SchemaName, `{"schema":"parameters_v1","parameters":{"message":"done"}}`},
}

// provider is one provider's fake: where it is reached, what a native
// request must carry, and its documented reply shape.
type provider struct {
	name     string
	path     string
	mode     workflow.OutputMode
	cfg      func(url string) llm.Config
	checkReq func(t *testing.T, body map[string]any, schema string, want json.RawMessage)
	reply    func(w http.ResponseWriter, schema, args string)
}

func openAIToolCall(w http.ResponseWriter, schema, args string) {
	writeJSON(w, map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{
			"role": "assistant", "content": nil,
			"tool_calls": []any{map[string]any{"id": "call_1", "type": "function",
				"function": map[string]any{"name": schema, "arguments": args}}},
		}}},
		"usage": map[string]any{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
	})
}

func openAIContent(w http.ResponseWriter, _, args string) {
	writeJSON(w, map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": args}}},
		"usage": map[string]any{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
	})
}

func anthropicToolUse(w http.ResponseWriter, schema, args string) {
	var input map[string]any
	_ = json.Unmarshal([]byte(args), &input)
	writeJSON(w, map[string]any{
		"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
		"content":     []any{map[string]any{"type": "tool_use", "id": "toolu_1", "name": schema, "input": input}},
		"stop_reason": "tool_use", "usage": map[string]any{"input_tokens": 100, "output_tokens": 20},
	})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// sameJSON compares two JSON values semantically.
func sameJSON(t *testing.T, what string, got any, want json.RawMessage) {
	t.Helper()
	var w any
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(w, got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", what, diff)
	}
}

// openAITool checks the OpenAI function-calling shape: one function tool
// with the stage schema, strict when strict, and tool_choice forcing it.
func openAITool(strict bool) func(t *testing.T, body map[string]any, schema string, want json.RawMessage) {
	return func(t *testing.T, body map[string]any, schema string, want json.RawMessage) {
		t.Helper()
		tools, _ := body["tools"].([]any)
		if len(tools) != 1 {
			t.Fatalf("tools = %v, want one", body["tools"])
		}
		tool := tools[0].(map[string]any)
		fn, _ := tool["function"].(map[string]any)
		if tool["type"] != "function" || fn["name"] != schema {
			t.Errorf("tool = %v, want function %s", tool, schema)
		}
		if got, _ := fn["strict"].(bool); got != strict {
			t.Errorf("function.strict = %v, want %v", fn["strict"], strict)
		}
		sameJSON(t, "function.parameters", fn["parameters"], want)
		sameJSON(t, "tool_choice", body["tool_choice"], json.RawMessage(`{"type":"function","function":{"name":"`+schema+`"}}`))
		if _, ok := body["response_format"]; ok {
			t.Errorf("response_format = %v sent with a tool", body["response_format"])
		}
	}
}

// jsonSchemaFormat checks response_format {type: json_schema, json_schema:
// {name, strict, schema}} and that no tool is sent.
func jsonSchemaFormat(t *testing.T, body map[string]any, schema string, want json.RawMessage) {
	t.Helper()
	rf, _ := body["response_format"].(map[string]any)
	js, _ := rf["json_schema"].(map[string]any)
	if rf["type"] != "json_schema" || js["name"] != schema || js["strict"] != true {
		t.Errorf("response_format = %v, want json_schema %s, strict", body["response_format"], schema)
	}
	sameJSON(t, "json_schema.schema", js["schema"], want)
	if _, ok := body["tools"]; ok {
		t.Errorf("tools = %v sent with a response format", body["tools"])
	}
}

func anthropicTool(t *testing.T, body map[string]any, schema string, want json.RawMessage) {
	t.Helper()
	tools, _ := body["tools"].([]any)
	if len(tools) != 1 {
		t.Fatalf("tools = %v, want one", body["tools"])
	}
	tool := tools[0].(map[string]any)
	if tool["name"] != schema {
		t.Errorf("tool name = %v, want %s", tool["name"], schema)
	}
	sameJSON(t, "input_schema", tool["input_schema"], want)
	sameJSON(t, "tool_choice", body["tool_choice"], json.RawMessage(`{"type":"tool","name":"`+schema+`"}`))
}

var providers = []provider{
	{
		name: "openai", path: "/v1/chat/completions", mode: workflow.OutputTool,
		cfg: func(url string) llm.Config {
			return llm.Config{Provider: "openai", Model: "gpt-test", OpenAIBaseURL: url + "/v1"}
		},
		checkReq: func(t *testing.T, body map[string]any, schema string, want json.RawMessage) {
			t.Helper()
			openAITool(true)(t, body, schema, want)
			if body["parallel_tool_calls"] != false {
				t.Errorf("parallel_tool_calls = %v, want false (strict schemas do not hold for parallel calls)", body["parallel_tool_calls"])
			}
		},
		reply: openAIToolCall,
	},
	{
		name: "anthropic", path: "/v1/messages", mode: workflow.OutputTool,
		cfg: func(url string) llm.Config {
			return llm.Config{Provider: "anthropic", Model: "claude-test", AnthropicAPIKey: "anthropic-test-key", AnthropicBaseURL: url + "/v1"}
		},
		checkReq: anthropicTool, reply: anthropicToolUse,
	},
	{
		name: "googleai", path: "/v1beta/openai/chat/completions", mode: workflow.OutputJSONSchema,
		cfg: func(url string) llm.Config {
			return llm.Config{Provider: "googleai", Model: "gemini-test", GoogleAPIKey: "google-test-key", GeminiBaseURL: url + "/v1beta/openai"}
		},
		checkReq: jsonSchemaFormat, reply: openAIContent,
	},
	{
		// Gemini with the tool override: a forced function, no "strict".
		name: "googleai-tool", path: "/v1beta/openai/chat/completions", mode: workflow.OutputTool,
		cfg: func(url string) llm.Config {
			return llm.Config{Provider: "googleai", Model: "gemini-test", GoogleAPIKey: "google-test-key",
				GeminiBaseURL: url + "/v1beta/openai", OutputMode: workflow.OutputTool}
		},
		checkReq: openAITool(false), reply: openAIToolCall,
	},
	{
		name: "ollama", path: "/v1/chat/completions", mode: workflow.OutputJSONSchema,
		cfg: func(url string) llm.Config {
			return llm.Config{Provider: "ollama", Model: "llama-test", OllamaBaseURL: url}
		},
		checkReq: jsonSchemaFormat, reply: openAIContent,
	},
}

// Every provider gets each stage's schema in its documented native shape,
// answers in its documented shape, and the replies run a real round
// through the engine: the echo executes with the optional null dropped
// and the round completes; every trace names the mode and the model.
func TestNativeStructuredRoundPerProvider(t *testing.T) {
	t.Parallel()
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			reg := enginetest.NewRegistry()
			var (
				mu     sync.Mutex
				n      int
				stage2 json.RawMessage
			)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != p.path {
					http.Error(w, "unexpected path "+r.URL.Path, http.StatusNotFound)
					return
				}
				raw, _ := io.ReadAll(r.Body)
				var body map[string]any
				if err := json.Unmarshal(raw, &body); err != nil {
					t.Errorf("request body: %v", err)
				}
				mu.Lock()
				i := n
				n++
				mu.Unlock()
				if i >= len(roundReplies) {
					http.Error(w, "no more replies", http.StatusInternalServerError)
					return
				}
				want := prompts.Stage1Output(reg.Actions(), reg.Connections("alice")).Schema
				if roundReplies[i].schema == prompts.Stage2SchemaName {
					want = stage2Schema(t, reg, i)
					mu.Lock()
					stage2 = want
					mu.Unlock()
				}
				p.checkReq(t, body, roundReplies[i].schema, want)
				p.reply(w, roundReplies[i].schema, roundReplies[i].args)
			}))
			t.Cleanup(srv.Close)
			model, err := llm.New(context.Background(), p.cfg(srv.URL))
			if err != nil {
				t.Fatal(err)
			}
			store := memstore.New()
			e := startEngine(t, store, model, reg)
			wf := enginetest.Wait(t, e, enginetest.Create(t, e, workflow.ModeReact, "echo hello", 5).ID)
			if wf.Status != workflow.StatusCompleted {
				t.Fatalf("round ended %s (%s): %s", wf.Status, wf.StopReason, wf.Error)
			}
			if calls := reg.Calls(); len(calls) != 1 || !cmp.Equal(calls[0].Parameters, map[string]any{"text": "hello"}) {
				t.Errorf("executions = %+v, want one echo with only text (the null message dropped)", calls)
			}
			msgs := enginetest.Messages(t, store, wf.ID)
			if last := msgs[len(msgs)-1]; last.Role != workflow.RoleAssistant || last.Text != "done" {
				t.Errorf("last message = %s %q, want the assistant's done", last.Role, last.Text)
			}
			traces := enginetest.Traces(t, store, wf.ID)
			var models int
			for _, tr := range traces {
				if tr.Stage == workflow.StageAction {
					continue
				}
				models++
				if tr.OutputMode != p.mode || tr.Model != model.Name() || tr.Error != "" {
					t.Errorf("%s trace: mode %q model %q error %q, want %q %q accepted", tr.Stage, tr.OutputMode, tr.Model, tr.Error, p.mode, model.Name())
				}
			}
			if models != 4 || n != 4 {
				t.Errorf("%d model traces, %d requests, want 4 each", models, n)
			}
			if s2 := traces[1]; !strings.Contains(s2.Response, `"message":null`) || strings.Contains(string(s2.Parsed), "message") {
				t.Errorf("stage 2 trace: response %s parsed %s, want the raw null kept and the parsed reply without it", s2.Response, s2.Parsed)
			}
			if stage2 == nil {
				t.Error("no Stage 2 request was checked")
			}
		})
	}
}

// stage2Schema is the schema the i-th reply's Stage 2 must carry: the
// selection of reply i-1 cut from the action's registered schema.
func stage2Schema(t *testing.T, reg *enginetest.Registry, i int) json.RawMessage {
	t.Helper()
	var sel struct {
		Action           string                    `json:"action"`
		ParametersSchema workflow.ParametersSchema `json:"parametersSchema"`
	}
	if err := json.Unmarshal([]byte(roundReplies[i-1].args), &sel); err != nil {
		t.Fatal(err)
	}
	spec, _ := reg.Action(sel.Action)
	out, err := prompts.NewStage2Output(spec, sel.ParametersSchema.Fields)
	if err != nil || !out.Output.Strict {
		t.Fatalf("stage 2 schema: %v %s", err, out.Output.NotStrict)
	}
	return out.Output.Schema
}

func startEngine(t testing.TB, store workflow.Store, model workflow.Model, reg workflow.Registry) *enginetest.Engine {
	t.Helper()
	set, err := templates.Load("")
	if err != nil {
		t.Fatal(err)
	}
	mode := react.New(prompts.NewBuilder(set, prompts.Options{}))
	return enginetest.StartEngine(t, enginetest.Config("a"), store, model, reg, map[workflow.ModeName]workflow.Mode{workflow.ModeReact: mode})
}

// An action whose parameter strict mode cannot express (oneOf) gets its
// Stage 2 call as json_object while Stage 1 stays a forced tool; the
// json_object reply still runs the step and the traces say which mode
// each call used.
func TestInexpressibleStage2FallsBackInARound(t *testing.T) {
	t.Parallel()
	reg := enginetest.NewRegistry()
	reg.Specs = append(reg.Specs, workflow.ActionSpec{Name: "test.lookup", Description: "Looks a record up.", Effect: workflow.EffectRead,
		Documents: workflow.DocumentsNone, Parameters: json.RawMessage(`{"type":"object","required":["text"],"additionalProperties":false,` +
			`"properties":{"text":{"oneOf":[{"type":"string","pattern":"^id:"},{"type":"string","format":"email"}]}}}`)})
	reg.ExecuteFunc = func(_ context.Context, call workflow.ActionCall) (workflow.ActionResult, error) {
		return workflow.ActionResult{Text: "found " + call.Parameters["text"].(string)}, nil
	}
	replies := []string{
		`{"action":"test.lookup","actionObjective":"look up","learnings":[],"requiredInputDocuments":[],"requiredConnection":null,` +
			`"parametersContext":"id 7","parametersSchema":{"fields":[{"name":"text","type":"string","required":true,"description":"the id"}]}}`,
		`{"schema":"parameters_v1","parameters":{"text":"id:7"}}`,
		roundReplies[2].args, roundReplies[3].args,
	}
	var (
		mu    sync.Mutex
		modes []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		i := len(modes)
		mode := "none"
		if body["tools"] != nil {
			mode = "tool"
		} else if rf, ok := body["response_format"].(map[string]any); ok {
			mode, _ = rf["type"].(string)
		}
		modes = append(modes, mode)
		mu.Unlock()
		if mode == "tool" {
			name := []string{prompts.Stage1SchemaName, prompts.Stage2SchemaName}[i%2]
			openAIToolCall(w, name, replies[i])
			return
		}
		openAIContent(w, "", replies[i])
	}))
	t.Cleanup(srv.Close)
	model, err := llm.New(context.Background(), llm.Config{Provider: "openai", Model: "gpt-test", OpenAIBaseURL: srv.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	store := memstore.New()
	e := startEngine(t, store, model, reg)
	wf := enginetest.Wait(t, e, enginetest.Create(t, e, workflow.ModeReact, "look up id 7", 5).ID)
	if wf.Status != workflow.StatusCompleted {
		t.Fatalf("round ended %s: %s", wf.Status, wf.Error)
	}
	if diff := cmp.Diff([]string{"tool", "json_object", "tool", "tool"}, modes); diff != "" {
		t.Errorf("request modes (-want +got):\n%s", diff)
	}
	if calls := reg.Calls(); len(calls) != 1 || calls[0].Parameters["text"] != "id:7" {
		t.Errorf("executions = %+v", calls)
	}
	var traced []workflow.OutputMode
	for _, tr := range enginetest.Traces(t, store, wf.ID) {
		if tr.Stage != workflow.StageAction {
			traced = append(traced, tr.OutputMode)
		}
	}
	if diff := cmp.Diff([]workflow.OutputMode{"tool", "json_object", "tool", "tool"}, traced); diff != "" {
		t.Errorf("trace modes (-want +got):\n%s", diff)
	}
}
