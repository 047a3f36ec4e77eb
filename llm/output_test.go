package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"github.com/twostep/twostep/workflow"
)

// rawServer answers every request with reply(w, body) and keeps the
// request bodies.
type rawServer struct {
	srv    *httptest.Server
	mu     sync.Mutex
	bodies []map[string]any
}

func newRawServer(t *testing.T, reply func(w http.ResponseWriter, body map[string]any)) *rawServer {
	t.Helper()
	s := &rawServer{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		s.mu.Lock()
		s.bodies = append(s.bodies, body)
		s.mu.Unlock()
		reply(w, body)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *rawServer) last() map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bodies[len(s.bodies)-1]
}

func openAIReply(content string) func(w http.ResponseWriter, body map[string]any) {
	return func(w http.ResponseWriter, _ map[string]any) { writeCompletion(w, content, 10, 5) }
}

// notStrict is a Stage 2 schema strict mode cannot take.
var notStrict = &workflow.OutputSchema{
	Name: "fill_parameters", Schema: json.RawMessage(`{"type":"object","properties":{"parameters":{"type":"object"}}}`),
	NotStrict: "action http.get: parameters.query is an object with no declared properties (a free-form map)",
}

var strictSchema = &workflow.OutputSchema{
	Name: "select_action", Schema: json.RawMessage(`{"type":"object","properties":{"action":{"type":"string"}},"required":["action"],"additionalProperties":false}`),
	Strict: true,
}

// A schema the provider cannot take in strict mode falls back to
// json_object, says why in the log, and the trace's mode says so too;
// Anthropic, which takes any JSON Schema as a tool's input_schema, keeps
// the tool, and Ollama its json_schema format (it has no strict mode).
func TestInexpressibleSchemaFallsBackWithLoggedReason(t *testing.T) {
	t.Parallel()
	srv := newRawServer(t, openAIReply(`{"schema":"parameters_v1","parameters":{}}`))
	m := newTestModel(t, srv.srv.URL+"/v1", nil, nil)
	var logs bytes.Buffer
	ctx := zerolog.New(&logs).WithContext(context.Background())
	req := prompt("fill")
	req.JSON, req.Output, req.Stage = true, notStrict, workflow.StageTwo
	resp, err := m.Generate(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.OutputMode != workflow.OutputJSONObject {
		t.Errorf("OutputMode = %q, want json_object", resp.OutputMode)
	}
	body := srv.last()
	if rf, _ := body["response_format"].(map[string]any); rf["type"] != "json_object" || body["tools"] != nil {
		t.Errorf("sent response_format %v tools %v, want json_object and no tool", body["response_format"], body["tools"])
	}
	line := logs.String()
	for _, want := range []string{`"reason":"action http.get: parameters.query is an object with no declared properties`, `"outputMode":"json_object"`, `"stage":"stage2"`} {
		if !strings.Contains(line, want) {
			t.Errorf("log %s lacks %s", line, want)
		}
	}

	anth := newRawServer(t, func(w http.ResponseWriter, _ map[string]any) {
		_, _ = io.WriteString(w, `{"id":"m","type":"message","role":"assistant","content":[{"type":"tool_use","id":"t","name":"fill_parameters",`+
			`"input":{"schema":"parameters_v1","parameters":{}}}],"stop_reason":"tool_use","usage":{"input_tokens":3,"output_tokens":2}}`)
	})
	am, err := New(context.Background(), Config{Provider: ProviderAnthropic, AnthropicAPIKey: "anthropic-key-1", AnthropicBaseURL: anth.srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	resp, err = am.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.OutputMode != workflow.OutputTool || resp.Text != `{"parameters":{},"schema":"parameters_v1"}` {
		t.Errorf("anthropic: mode %q text %s, want the tool's input", resp.OutputMode, resp.Text)
	}
	if tools, _ := anth.last()["tools"].([]any); len(tools) != 1 {
		t.Errorf("anthropic tools = %v", anth.last()["tools"])
	}

	// Ollama has no strict mode: the plain schema goes as its format.
	oll := newRawServer(t, openAIReply(`{"schema":"parameters_v1","parameters":{}}`))
	om, err := New(context.Background(), Config{Provider: ProviderOllama, OllamaBaseURL: oll.srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if resp, err = om.Generate(context.Background(), req); err != nil || resp.OutputMode != workflow.OutputJSONSchema {
		t.Fatalf("ollama: mode %q, %v", resp.OutputMode, err)
	}
	rf, _ := oll.last()["response_format"].(map[string]any)
	if js, _ := rf["json_schema"].(map[string]any); rf["type"] != "json_schema" || js["strict"] != false || js["schema"] == nil {
		t.Errorf("ollama response_format = %v, want json_schema with the plain schema, strict false", rf)
	}
}

// The mode is the call's override, else the model's configured one, else
// the provider's default; a call without a schema asks for JSON (or text)
// whatever the mode; a model that answers prose despite the forced tool
// (Ollama ignores tool_choice) has its text parsed.
func TestOutputModeChoice(t *testing.T) {
	t.Parallel()
	srv := newRawServer(t, openAIReply(`{"action":"x"}`))
	for _, tt := range []struct {
		name       string
		cfgMode    workflow.OutputMode
		callMode   workflow.OutputMode
		output     *workflow.OutputSchema
		json       bool
		want       workflow.OutputMode
		wantFormat string // response_format.type sent, "" for none
		wantTool   bool
	}{
		{"default openai is tool", "", "", strictSchema, true, workflow.OutputTool, "", true},
		{"configured json_schema", workflow.OutputJSONSchema, "", strictSchema, true, workflow.OutputJSONSchema, "json_schema", false},
		{"call override wins", workflow.OutputJSONSchema, workflow.OutputText, strictSchema, true, workflow.OutputText, "", false},
		{"configured json_object", workflow.OutputJSONObject, "", strictSchema, true, workflow.OutputJSONObject, "json_object", false},
		{"no schema asks for json", "", "", nil, true, workflow.OutputJSONObject, "json_object", false},
		{"no schema, no json", "", "", nil, false, workflow.OutputText, "", false},
		{"invalid call override ignored", "", "xml", strictSchema, true, workflow.OutputTool, "", true},
	} {
		m := newTestModel(t, srv.srv.URL+"/v1", nil, func(c *Config) { c.OutputMode = tt.cfgMode })
		req := prompt("go")
		req.JSON, req.Output, req.OutputMode = tt.json, tt.output, tt.callMode
		resp, err := m.Generate(context.Background(), req)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		body := srv.last()
		rf, _ := body["response_format"].(map[string]any)
		format, _ := rf["type"].(string)
		if resp.OutputMode != tt.want || format != tt.wantFormat || (body["tools"] != nil) != tt.wantTool {
			t.Errorf("%s: mode %q, response_format %q, tools %v; want %q, %q, tool %v",
				tt.name, resp.OutputMode, format, body["tools"], tt.want, tt.wantFormat, tt.wantTool)
		}
		if tt.want == workflow.OutputTool && resp.Text != `{"action":"x"}` {
			t.Errorf("%s: a prose answer to a forced tool gives text %q, want the content", tt.name, resp.Text)
		}
	}
}

func TestOutputModeConfigChecked(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		cfg  Config
		want string
	}{
		{Config{Provider: ProviderAnthropic, AnthropicAPIKey: "k", OutputMode: workflow.OutputJSONSchema}, `provider anthropic cannot use output mode "json_schema" (it can: tool, text)`},
		{Config{Provider: ProviderOllama, OutputMode: "xml"}, `output mode "xml" is not one of tool, json_schema, json_object, text`},
	} {
		err := tt.cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Validate(%+v) = %v, want %q", tt.cfg, err, tt.want)
		}
	}
	if err := (Config{Provider: ProviderGoogleAI, GoogleAPIKey: "k", OutputMode: workflow.OutputTool}).Validate(); err != nil {
		t.Errorf("googleai tool: %v", err)
	}
	for p, want := range map[string]workflow.OutputMode{ProviderOpenAI: "tool", ProviderAnthropic: "tool", ProviderGoogleAI: "json_schema", ProviderOllama: "json_schema", "x": ""} {
		if got := DefaultOutputMode(p); got != want {
			t.Errorf("DefaultOutputMode(%s) = %q, want %q", p, got, want)
		}
	}
}

func TestPatchBodyRefusesANonObjectBody(t *testing.T) {
	t.Parallel()
	req, _ := http.NewRequest(http.MethodPost, "http://x", strings.NewReader(`[1]`))
	patch := bodyPatch{set: map[string]json.RawMessage{"a": json.RawMessage(`1`)}}
	if _, _, err := patchBody(req, patch); err == nil {
		t.Error("patched a JSON array")
	}
	req, _ = http.NewRequest(http.MethodPost, "http://x", strings.NewReader(`{"a":0,"b":2}`))
	out, _, err := patchBody(req, patch)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(out.Body)
	if string(got) != `{"a":1,"b":2}` || out.ContentLength != int64(len(got)) {
		t.Errorf("patched body %s (length %d)", got, out.ContentLength)
	}
}

// A provider that refuses the native request (HTTP 400, e.g. a pattern it
// does not take) gets the call once more as json_object, with the reason
// logged, instead of failing the round.
func TestRefusedNativeRequestIsSentAgainWithoutTheSchema(t *testing.T) {
	t.Parallel()
	srv := newRawServer(t, func(w http.ResponseWriter, body map[string]any) {
		if body["tools"] != nil {
			writeError(w, http.StatusBadRequest, "Invalid schema for function 'select_action': pattern is not supported")
			return
		}
		writeCompletion(w, `{"action":"x"}`, 5, 2)
	})
	m := newTestModel(t, srv.srv.URL+"/v1", nil, nil)
	var logs bytes.Buffer
	req := prompt("go")
	req.JSON, req.Output = true, strictSchema
	resp, err := m.Generate(zerolog.New(&logs).WithContext(context.Background()), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.OutputMode != workflow.OutputJSONObject || resp.Text != `{"action":"x"}` || len(srv.bodies) != 2 {
		t.Errorf("mode %q text %q after %d calls, want json_object on the second", resp.OutputMode, resp.Text, len(srv.bodies))
	}
	if rf, _ := srv.last()["response_format"].(map[string]any); rf["type"] != "json_object" {
		t.Errorf("second request response_format = %v", srv.last()["response_format"])
	}
	if !strings.Contains(logs.String(), "pattern is not supported") || !strings.Contains(logs.String(), "native structured output refused") {
		t.Errorf("log %s lacks the refusal", logs.String())
	}
}

// A forced tool call cut at the token limit is reported as truncated (and
// so never parsed), for OpenAI's finish_reason and Anthropic's stop_reason.
func TestTruncatedToolCall(t *testing.T) {
	t.Parallel()
	oai := newRawServer(t, func(w http.ResponseWriter, _ map[string]any) {
		_, _ = io.WriteString(w, `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"length",`+
			`"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"select_action","arguments":"{\"action\":\"x"}}]}}],`+
			`"usage":{"prompt_tokens":9,"completion_tokens":32,"total_tokens":41}}`)
	})
	anth := newRawServer(t, func(w http.ResponseWriter, _ map[string]any) {
		_, _ = io.WriteString(w, `{"id":"m","type":"message","role":"assistant","content":[{"type":"tool_use","id":"t","name":"select_action",`+
			`"input":{"action":"x"}}],"stop_reason":"max_tokens","usage":{"input_tokens":3,"output_tokens":2}}`)
	})
	am, err := New(context.Background(), Config{Provider: ProviderAnthropic, AnthropicAPIKey: "anthropic-key-1", AnthropicBaseURL: anth.srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	for name, m := range map[string]*Model{"openai": newTestModel(t, oai.srv.URL+"/v1", nil, nil), "anthropic": am} {
		req := prompt("go")
		req.JSON, req.Output = true, strictSchema
		resp, err := m.Generate(context.Background(), req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !resp.Truncated || resp.OutputMode != workflow.OutputTool {
			t.Errorf("%s: Truncated %v (stop %q), mode %q; want a truncated tool reply", name, resp.Truncated, resp.StopReason, resp.OutputMode)
		}
	}
}
