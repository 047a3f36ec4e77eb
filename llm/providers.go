package llm

import (
	"context"
	"strings"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/anthropic"
	"github.com/tmc/langchaingo/llms/openai"

	"github.com/twostep/twostep/workflow"
)

// client is the provider client the Model drives, with what the adapter must
// know about it.
type client struct {
	llm llms.Model
	// legacyMaxTokens sends max_tokens instead of max_completion_tokens, for
	// OpenAI-compatible servers that predate the newer field.
	legacyMaxTokens bool
	close           func() error
}

// newClient builds the langchaingo client for cfg (with defaults applied).
// Every option is passed explicitly, so langchaingo never falls back to its
// own environment variables.
func newClient(ctx context.Context, cfg Config) (client, error) {
	switch cfg.Provider {
	case ProviderOpenAI:
		token := cfg.OpenAIAPIKey
		if token == "" {
			// A keyless OpenAI-compatible server (Validate allows it only
			// with OPENAI_BASE_URL); langchaingo insists on some token.
			token = "unused"
		}
		c, err := openai.New(
			openai.WithToken(token),
			openai.WithModel(cfg.Model),
			openai.WithBaseURL(cfg.OpenAIBaseURL),
			openai.WithHTTPClient(newHTTPClient(cfg.HTTPClient, nil)),
		)
		return client{llm: c, legacyMaxTokens: cfg.OpenAIBaseURL != defaultOpenAIBaseURL}, err
	case ProviderAnthropic:
		c, err := anthropic.New(
			anthropic.WithToken(cfg.AnthropicAPIKey),
			anthropic.WithModel(cfg.Model),
			anthropic.WithBaseURL(cfg.AnthropicBaseURL),
			anthropic.WithHTTPClient(newHTTPClient(cfg.HTTPClient, nil)),
		)
		// The Messages API has no JSON mode: a forced tool, or the stage
		// prompts' own request for JSON (output.go).
		return client{llm: c}, err
	case ProviderGoogleAI:
		// Gemini through its OpenAI-compatible endpoint: langchaingo's
		// googleai client pulls the deprecated generative-ai-go SDK and
		// the whole Google Cloud client stack (docs/configuration.md,
		// "Gemini").
		c, err := openai.New(
			openai.WithToken(cfg.GoogleAPIKey),
			openai.WithModel(cfg.Model),
			openai.WithBaseURL(cfg.GeminiBaseURL),
			openai.WithHTTPClient(newHTTPClient(cfg.HTTPClient, nil)),
		)
		return client{llm: c, legacyMaxTokens: true}, err
	case ProviderOllama:
		// Ollama through its OpenAI-compatible /v1: langchaingo's native
		// ollama client sends neither tools nor a schema format, and
		// reports no stop reason; /v1 takes tools and response_format
		// json_schema and reports finish_reason "length".
		c, err := openai.New(
			openai.WithToken("unused"), // Ollama needs no key; langchaingo insists on one
			openai.WithModel(cfg.Model),
			openai.WithBaseURL(strings.TrimRight(cfg.OllamaBaseURL, "/")+"/v1"),
			openai.WithHTTPClient(newHTTPClient(cfg.HTTPClient, nil)),
		)
		return client{llm: c, legacyMaxTokens: true}, err
	case ProviderScripted:
		return client{}, workflow.Errorf(workflow.KindInvalid,
			"llm.New: LLM_PROVIDER=scripted needs a script: use scripted.New or a scripted.Model with Reply")
	}
	return client{}, workflow.Errorf(workflow.KindInvalid, "llm.New: unknown provider %q", cfg.Provider)
}

// callOptions returns the langchaingo options for req besides its output
// mode's (planOutput).
func (c client) callOptions(req workflow.ModelRequest) []llms.CallOption {
	var opts []llms.CallOption
	if req.Temperature != nil {
		opts = append(opts, llms.WithTemperature(*req.Temperature))
	}
	if req.MaxTokens > 0 {
		opts = append(opts, llms.WithMaxTokens(req.MaxTokens))
		if c.legacyMaxTokens {
			opts = append(opts, openai.WithLegacyMaxTokensField())
		}
	}
	return opts
}

// toMessages converts the engine's prompt into langchaingo messages.
func toMessages(in []workflow.PromptMessage) ([]llms.MessageContent, error) {
	if len(in) == 0 {
		return nil, workflow.Errorf(workflow.KindInvalid, "the prompt has no messages")
	}
	out := make([]llms.MessageContent, 0, len(in))
	for i, m := range in {
		var role llms.ChatMessageType
		switch m.Role {
		case workflow.PromptSystem:
			role = llms.ChatMessageTypeSystem
		case workflow.PromptUser, "human":
			role = llms.ChatMessageTypeHuman
		case workflow.PromptAssistant, "ai":
			role = llms.ChatMessageTypeAI
		default:
			return nil, workflow.Errorf(workflow.KindInvalid, "prompt message %d has unknown role %q", i, m.Role)
		}
		out = append(out, llms.TextParts(role, m.Content))
	}
	return out, nil
}
