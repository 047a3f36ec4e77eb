package llm

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/tmc/langchaingo/llms"

	"github.com/twostep/twostep/workflow"
)

// How each provider's native structured output is sent (docs/configuration.md,
// "Output modes"). langchaingo v0.1.14 expresses tools with any JSON Schema
// (llms.WithTools, FunctionDefinition.Strict) and, for OpenAI-compatible
// servers, a forced choice (llms.WithToolChoice). It cannot express two
// things the adapter needs, so the adapter's transport adds them to the
// request body (bodyPatch), with OpenAI's parallel_tool_calls: false:
//   - a json_schema response format per call: langchaingo's openai client
//     sets response_format only per client, from a fixed struct with one
//     "type" string and no "pattern", which cannot carry a nullable field;
//   - Anthropic's tool_choice: its anthropic client drops
//     llms.WithToolChoice, so the model could answer in prose instead.

// outputModes lists the modes a provider can send, its default first.
// Gemini's OpenAI-compatible endpoint documents json_schema structured
// output (a forced tool_choice it does not document); Ollama's /v1 takes
// response_format json_schema as its grammar-enforced format and tools,
// but ignores tool_choice, so json_schema is its default too. Anthropic's
// Messages API has no JSON mode: a forced tool or plain text.
func outputModes(provider string) []workflow.OutputMode {
	switch provider {
	case ProviderOpenAI:
		return []workflow.OutputMode{workflow.OutputTool, workflow.OutputJSONSchema, workflow.OutputJSONObject, workflow.OutputText}
	case ProviderGoogleAI, ProviderOllama:
		return []workflow.OutputMode{workflow.OutputJSONSchema, workflow.OutputTool, workflow.OutputJSONObject, workflow.OutputText}
	case ProviderAnthropic:
		return []workflow.OutputMode{workflow.OutputTool, workflow.OutputText}
	}
	return nil
}

// DefaultOutputMode returns the mode provider's stage calls use unless
// configured otherwise ("" for an unknown provider).
func DefaultOutputMode(provider string) workflow.OutputMode {
	if modes := outputModes(provider); len(modes) > 0 {
		return modes[0]
	}
	return ""
}

// CheckOutputMode returns a KindInvalid error when provider cannot use
// mode (an unknown mode, or one the provider lacks, e.g. json_schema on
// Anthropic); nil for a usable or unset mode.
func CheckOutputMode(provider string, mode workflow.OutputMode) error {
	if problem := checkOutputMode(provider, mode); problem != "" {
		return workflow.Errorf(workflow.KindInvalid, "%s", problem)
	}
	return nil
}

// checkOutputMode reports why mode cannot be used with provider ("" when
// it can, or when mode is unset).
func checkOutputMode(provider string, mode workflow.OutputMode) string {
	if mode == "" {
		return ""
	}
	if !mode.Valid() {
		return fmt.Sprintf("output mode %q is not one of tool, json_schema, json_object, text", mode)
	}
	modes := outputModes(provider)
	if !slices.Contains(modes, mode) {
		names := make([]string, len(modes))
		for i, m := range modes {
			names[i] = string(m)
		}
		return fmt.Sprintf("provider %s cannot use output mode %q (it can: %s)", provider, mode, strings.Join(names, ", "))
	}
	return ""
}

// outputPlan is how one call asks for its reply.
type outputPlan struct {
	mode workflow.OutputMode
	opts []llms.CallOption
	// patch holds top-level request-body members the transport sets.
	patch map[string]json.RawMessage
	// tool is the forced tool's name in tool mode, whose call's
	// arguments are the reply.
	tool string
	// fallback says why a native mode was not used ("" when it was, or
	// when none was asked).
	fallback string
}

// planOutput chooses the call's mode: the request's, else the model's
// configured one, else the provider's default; a native mode needs a
// schema the provider can take (strict-mode form for OpenAI-compatible
// servers), else the call falls back to json_object (text where the
// provider has no JSON mode) with the reason.
func (m *Model) planOutput(req workflow.ModelRequest) outputPlan {
	want := req.OutputMode
	if want == "" || checkOutputMode(m.provider, want) != "" {
		want = m.outputMode
	}
	var p outputPlan
	if want.Native() {
		// A call without a schema (the action-plan mode's plan and repair,
		// an action's own call) asks for JSON or text, silently.
		if req.Output != nil {
			if p.fallback = m.nativeProblem(*req.Output); p.fallback == "" {
				return m.nativePlan(want, *req.Output)
			}
		}
		want = workflow.OutputJSONObject
	}
	return m.plainPlan(req, want, p.fallback)
}

// plainPlan asks for a JSON object when want is json_object, the call
// wants JSON and the provider has a JSON mode; else for text.
func (m *Model) plainPlan(req workflow.ModelRequest, want workflow.OutputMode, fallback string) outputPlan {
	p := outputPlan{mode: workflow.OutputText, fallback: fallback}
	if want == workflow.OutputJSONObject && req.JSON && slices.Contains(outputModes(m.provider), workflow.OutputJSONObject) {
		p.mode = workflow.OutputJSONObject
		p.opts = append(p.opts, llms.WithJSONMode())
	}
	return p
}

// nativeProblem says why out cannot be sent natively ("" when it can).
func (m *Model) nativeProblem(out workflow.OutputSchema) string {
	switch {
	case len(out.Schema) == 0:
		return "the stage has no schema: " + out.NotStrict
	case !out.Strict && m.provider != ProviderAnthropic && m.provider != ProviderOllama:
		// OpenAI, OpenAI-compatible servers and Gemini get strict mode.
		// Anthropic takes any JSON Schema in a tool's input_schema, and
		// Ollama, which has no strict mode, turns the schema into its
		// output grammar (sent with "strict": false).
		return out.NotStrict
	}
	return ""
}

// refusedCacheMarks reports whether f is the provider refusing, with HTTP
// 400, a request for its prompt-cache markers (an OpenAI-compatible server
// that takes no prompt_cache_key, say): the request carried some and the
// refusal's message plausibly names them (namesCacheMarks). Any other 400
// (a prompt too long for the context, say) is the request's own fault,
// which a call without the markers would only repeat. A native request is
// sent again without its schema first (refusedNative).
func refusedCacheMarks(plan outputPlan, cache cacheMarks, f *failure) bool {
	return !plan.mode.Native() && !cache.empty() && f.status == http.StatusBadRequest && namesCacheMarks(f.err)
}

// cacheMarkRefusals are the words, lower case, of a 400's message that
// name the prompt-cache markers, or an extra field of the request: the
// markers' own names, and how OpenAI-compatible servers (OpenAI, vLLM's
// and other pydantic-based ones, llama.cpp, LiteLLM) refuse a field they
// do not know.
var cacheMarkRefusals = []string{
	"prompt_cache_key", "cache_control",
	"unrecognized request argument", "unrecognized parameter", "unrecognized field",
	"unknown parameter", "unknown field", "unknown argument", "unsupported parameter",
	"extra inputs are not permitted", "extra_forbidden", "additional properties",
}

// namesCacheMarks reports whether err's message names the cache markers or
// an unknown field (cacheMarkRefusals).
func namesCacheMarks(err error) bool {
	if err == nil {
		return false
	}
	msg := strings.ToLower(err.Error())
	return slices.ContainsFunc(cacheMarkRefusals, func(w string) bool { return strings.Contains(msg, w) })
}

// refusedNative reports whether f is the provider refusing a native
// request as malformed (HTTP 400: a schema construct, a pattern or format
// it does not take, or a mode the model lacks), which json_object may
// still serve.
func refusedNative(plan outputPlan, f *failure) bool {
	return plan.mode.Native() && f.status == http.StatusBadRequest
}

// nativePlan sends out as a forced tool or a json_schema response format.
func (m *Model) nativePlan(mode workflow.OutputMode, out workflow.OutputSchema) outputPlan {
	p := outputPlan{mode: mode}
	if mode == workflow.OutputJSONSchema {
		format, _ := json.Marshal(map[string]any{"type": "json_schema", "json_schema": map[string]any{
			"name": out.Name, "description": out.Description, "strict": out.Strict, "schema": out.Schema,
		}})
		// WithJSONMode makes langchaingo send a response_format, which the
		// patch replaces with the schema.
		p.opts = append(p.opts, llms.WithJSONMode())
		p.patch = map[string]json.RawMessage{"response_format": format}
		return p
	}
	p.tool = out.Name
	// Gemini's endpoint does not document "strict"; OpenAI and Ollama get it.
	strict := out.Strict && m.provider != ProviderGoogleAI && m.provider != ProviderAnthropic
	p.opts = append(p.opts, llms.WithTools([]llms.Tool{{Type: "function", Function: &llms.FunctionDefinition{
		Name: out.Name, Description: out.Description, Parameters: out.Schema, Strict: strict,
	}}}))
	switch m.provider {
	case ProviderAnthropic:
		choice, _ := json.Marshal(map[string]string{"type": "tool", "name": out.Name})
		p.patch = map[string]json.RawMessage{"tool_choice": choice}
	case ProviderOpenAI:
		// OpenAI: strict function schemas do not hold for parallel calls,
		// so ask for exactly one (langchaingo has no field for it).
		p.patch = map[string]json.RawMessage{"parallel_tool_calls": json.RawMessage(`false`)}
		fallthrough
	default:
		p.opts = append(p.opts, llms.WithToolChoice(llms.ToolChoice{Type: "function", Function: &llms.FunctionReference{Name: out.Name}}))
	}
	return p
}

// replyText returns the reply the stage parser reads: in tool mode the
// forced tool call's arguments (Anthropic's tool_use input), else — and
// when a model answered in prose despite the tool — the text of every
// choice.
func replyText(choices []*llms.ContentChoice, tool string) string {
	if tool != "" {
		for _, c := range choices {
			for _, tc := range c.ToolCalls {
				if tc.FunctionCall != nil && tc.FunctionCall.Name == tool {
					return tc.FunctionCall.Arguments
				}
			}
		}
	}
	var text strings.Builder
	for _, c := range choices {
		text.WriteString(c.Content)
	}
	return text.String()
}
