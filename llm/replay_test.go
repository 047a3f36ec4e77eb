package llm

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"

	"github.com/twostep/twostep/workflow"
)

func openReplay(t *testing.T, name string) *replayer {
	t.Helper()
	log, err := readHTTPRR("testdata/" + name)
	if err != nil {
		t.Fatalf("readHTTPRR(%s): %v", name, err)
	}
	return newReplayer(log)
}

// TestReplayRecordedProviders drives the adapter through real recorded
// provider responses: the reply text, JSON mode and the reported usage.
func TestReplayRecordedProviders(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file       string
		cfg        Config
		json       bool
		wantText   string // exact, or a prefix when wantPrefix
		wantPrefix bool
		wantUsage  [2]int
		checkSent  func(t *testing.T, sent map[string]any)
	}{
		{
			file:      "openai_MultiContentText.httprr",
			cfg:       Config{Provider: "openai", Model: "gpt-3.5-turbo", OpenAIAPIKey: "test-api-key"},
			wantText:  "You are a dog, which is a type of mammal.",
			wantUsage: [2]int{21, 13},
		},
		{
			file:      "openai_StructuredOutputObjectSchema.httprr",
			cfg:       Config{Provider: "openai", Model: "gpt-4o-2024-08-06", OpenAIAPIKey: "test-api-key"},
			json:      true,
			wantText:  `{"final_answer":"4"}`,
			wantUsage: [2]int{53, 6},
			checkSent: func(t *testing.T, sent map[string]any) {
				rf, _ := sent["response_format"].(map[string]any)
				if rf["type"] != "json_object" {
					t.Errorf("response_format = %v, want json_object", sent["response_format"])
				}
			},
		},
		{
			// The recorded reply is a tool call with no text: the adapter
			// returns empty text (the stage parser rejects it) and the usage.
			file:      "openai_FunctionCall.httprr",
			cfg:       Config{Provider: "openai", Model: "gpt-3.5-turbo", OpenAIAPIKey: "test-api-key"},
			wantText:  "",
			wantUsage: [2]int{81, 14},
		},
		{
			file:      "anthropic_CreateMessage.httprr",
			cfg:       Config{Provider: "anthropic", Model: "claude-3-opus-20240229", AnthropicAPIKey: "test-api-key"},
			json:      true, // ignored: the Messages API has no JSON mode
			wantText:  "Hello! As an AI language model, I don't have feelings, but I'm functioning properly and ready to assist you. How can I help you today?",
			wantUsage: [2]int{13, 35},
			checkSent: func(t *testing.T, sent map[string]any) {
				if sent["system"] != "You answer in JSON." {
					t.Errorf("system = %v, want the system message lifted into the system field", sent["system"])
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			rr := openReplay(t, tt.file)
			cfg := tt.cfg
			cfg.HTTPClient = &http.Client{Transport: rr}
			m, err := New(context.Background(), cfg)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			req := prompt("How many feet are in a nautical mile?")
			req.JSON = tt.json
			got, err := m.Generate(context.Background(), req)
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			if tt.wantPrefix && !strings.HasPrefix(got.Text, tt.wantText) || !tt.wantPrefix && got.Text != tt.wantText {
				t.Errorf("Text = %q, want %q (prefix: %v)", got.Text, tt.wantText, tt.wantPrefix)
			}
			if u := [2]int{got.PromptTokens, got.CompletionTokens}; u != tt.wantUsage {
				t.Errorf("usage = %v, want %v as reported by the provider", u, tt.wantUsage)
			}
			// The recordings report no cache hit (OpenAI cached_tokens 0,
			// Anthropic cache_*_input_tokens 0 or absent).
			if got.CachedTokens != 0 || got.CacheWriteTokens != 0 {
				t.Errorf("cached %d, written %d, want 0 as recorded", got.CachedTokens, got.CacheWriteTokens)
			}
			if got.Model != cfg.Provider+"/"+cfg.Model {
				t.Errorf("Model = %q", got.Model)
			}
			if tt.checkSent != nil {
				var sent map[string]any
				if err := rr.sent(0, &sent); err != nil {
					t.Fatal(err)
				}
				tt.checkSent(t, sent)
			}
		})
	}
}

// TestReplayToolCall checks the recorded tool call through langchaingo's
// OpenAI client over the replaying transport: the recording, transport and
// usage mapping must agree with it (TestReplayNativeModes drives the
// adapter's own tool mode over the same recording).
func TestReplayToolCall(t *testing.T) {
	t.Parallel()
	rr := openReplay(t, "openai_FunctionCall.httprr")
	c, err := openai.New(openai.WithToken("test-api-key"), openai.WithModel("gpt-3.5-turbo"),
		openai.WithBaseURL(defaultOpenAIBaseURL), openai.WithHTTPClient(&http.Client{Transport: rr}))
	if err != nil {
		t.Fatal(err)
	}
	tool := llms.Tool{Type: "function", Function: &llms.FunctionDefinition{
		Name: "getCurrentWeather", Description: "Get the current weather in a given location",
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"location": map[string]any{"type": "string"}}},
	}}
	out, err := c.GenerateContent(context.Background(),
		[]llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "What is the weather like in Boston?")},
		llms.WithTools([]llms.Tool{tool}))
	if err != nil {
		t.Fatalf("GenerateContent: %v", err)
	}
	choice := out.Choices[0]
	if len(choice.ToolCalls) != 1 || choice.ToolCalls[0].FunctionCall.Name != "getCurrentWeather" {
		t.Fatalf("ToolCalls = %+v, want one getCurrentWeather call", choice.ToolCalls)
	}
	var args struct{ Location string }
	if err := json.Unmarshal([]byte(choice.ToolCalls[0].FunctionCall.Arguments), &args); err != nil || args.Location != "Boston" {
		t.Errorf("arguments = %q (%v), want location Boston", choice.ToolCalls[0].FunctionCall.Arguments, err)
	}
	if u := reportedUsage(choice); u != (usage{prompt: 81, completion: 14}) {
		t.Errorf("usage = %+v, want 81/14 with no cached tokens", u)
	}
}

func TestReplayUnknownRequestIsAnError(t *testing.T) {
	t.Parallel()
	rr := openReplay(t, "anthropic_CreateMessage.httprr")
	m, err := New(context.Background(), Config{Provider: "anthropic", Model: "claude-other", AnthropicAPIKey: "test-api-key",
		HTTPClient: &http.Client{Transport: rr}, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Generate(context.Background(), prompt("hi"))
	if workflow.KindOf(err) != workflow.KindUnavailable || !strings.Contains(err.Error(), "recording has") {
		t.Errorf("err = %v, want the replayer's model mismatch surfaced as unavailable", err)
	}
}

func TestParseHTTPRRRejectsCorruptTraces(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"", "not a trace\n", "httprr trace v1\n10 5\nshort", "httprr trace v1\nx y\n"} {
		if _, err := parseHTTPRR(in); err == nil {
			t.Errorf("parseHTTPRR(%q) succeeded, want an error", in)
		}
	}
}

// TestReplayNativeModes drives the adapter's native modes through real
// recorded OpenAI exchanges: a json_schema response format (the request
// the adapter sends has the recorded request's response_format shape) and
// a forced function call whose real arguments become the reply text.
func TestReplayNativeModes(t *testing.T) {
	t.Parallel()
	t.Run("json_schema", func(t *testing.T) {
		t.Parallel()
		rr := openReplay(t, "openai_StructuredOutputObjectSchema.httprr")
		m, err := New(context.Background(), Config{Provider: "openai", Model: "gpt-4o-2024-08-06", OpenAIAPIKey: "test-api-key",
			HTTPClient: &http.Client{Transport: rr}, OutputMode: workflow.OutputJSONSchema})
		if err != nil {
			t.Fatal(err)
		}
		req := prompt("Solve 2 + 2")
		req.JSON, req.Output = true, &workflow.OutputSchema{Name: "math_schema", Strict: true,
			Schema: json.RawMessage(`{"type":"object","properties":{"final_answer":{"type":"string"}},"additionalProperties":false,"required":["final_answer"]}`)}
		got, err := m.Generate(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if got.Text != `{"final_answer":"4"}` || got.OutputMode != workflow.OutputJSONSchema {
			t.Errorf("reply %q mode %q", got.Text, got.OutputMode)
		}
		var sent, recorded struct {
			ResponseFormat struct {
				Type       string `json:"type"`
				JSONSchema struct {
					Name   string          `json:"name"`
					Strict bool            `json:"strict"`
					Schema json.RawMessage `json:"schema"`
				} `json:"json_schema"`
			} `json:"response_format"`
		}
		if err := rr.sent(0, &sent); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(rr.log[0].reqBody, &recorded); err != nil {
			t.Fatal(err)
		}
		s, r := sent.ResponseFormat, recorded.ResponseFormat
		if s.Type != r.Type || s.JSONSchema.Name != r.JSONSchema.Name || s.JSONSchema.Strict != r.JSONSchema.Strict || len(s.JSONSchema.Schema) == 0 {
			t.Errorf("sent response_format %+v, recorded %+v", s, r)
		}
	})
	t.Run("tool", func(t *testing.T) {
		t.Parallel()
		rr := openReplay(t, "openai_FunctionCall.httprr")
		m, err := New(context.Background(), Config{Provider: "openai", Model: "gpt-3.5-turbo", OpenAIAPIKey: "test-api-key",
			HTTPClient: &http.Client{Transport: rr}})
		if err != nil {
			t.Fatal(err)
		}
		req := prompt("What is the weather like in Boston?")
		req.JSON, req.Output = true, &workflow.OutputSchema{Name: "getCurrentWeather", Strict: true,
			Schema: json.RawMessage(`{"type":"object","properties":{"location":{"type":"string"}},"required":["location"],"additionalProperties":false}`)}
		got, err := m.Generate(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		var args struct{ Location string }
		if err := json.Unmarshal([]byte(got.Text), &args); err != nil || !strings.Contains(args.Location, "Boston") || got.OutputMode != workflow.OutputTool {
			t.Errorf("reply %q (%v) mode %q, want the recorded call's arguments", got.Text, err, got.OutputMode)
		}
		var sent map[string]any
		if err := rr.sent(0, &sent); err != nil {
			t.Fatal(err)
		}
		if choice, _ := sent["tool_choice"].(map[string]any); choice["type"] != "function" {
			t.Errorf("tool_choice = %v, want the function forced", sent["tool_choice"])
		}
	})
}
