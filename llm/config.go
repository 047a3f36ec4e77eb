package llm

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/twostep/twostep/workflow"
)

// The providers New accepts (LLM_PROVIDER).
const (
	ProviderOpenAI    = "openai"
	ProviderAnthropic = "anthropic"
	ProviderGoogleAI  = "googleai"
	ProviderOllama    = "ollama"
	ProviderScripted  = "scripted"
)

// Defaults applied by New for zero Config fields.
const (
	DefaultTimeout        = 120 * time.Second
	DefaultMaxAttempts    = 3
	DefaultMaxInFlight    = 16
	DefaultRetryBaseDelay = 500 * time.Millisecond
	DefaultMaxRetryDelay  = 30 * time.Second
	defaultOpenAIBaseURL  = "https://api.openai.com/v1"
	defaultOllamaBaseURL  = "http://localhost:11434"
	defaultGeminiBaseURL  = "https://generativelanguage.googleapis.com/v1beta/openai"
	defaultAnthropicURL   = "https://api.anthropic.com/v1"
)

// DefaultModel returns the model used for provider when Config.Model is
// empty, and "" for an unknown provider.
func DefaultModel(provider string) string {
	switch provider {
	case ProviderOpenAI:
		return "gpt-4o-mini"
	case ProviderAnthropic:
		return "claude-sonnet-4-0"
	case ProviderGoogleAI:
		return "gemini-2.0-flash"
	case ProviderOllama:
		return "llama3.1"
	case ProviderScripted:
		return "scripted"
	}
	return ""
}

// Retry describes one retry the Model is about to make, for logs and tests.
type Retry struct {
	Attempt int           // the attempt that failed, from 1
	Delay   time.Duration // how long the Model waits before the next attempt
	Status  int           // the provider's HTTP status, 0 for timeouts and transport errors
	Err     error         // the failure, already free of secrets
}

// Config is filled by cmd/gateway from the environment. The zero value of
// every field except Provider and the keys has a sensible default.
type Config struct {
	// Provider is openai|anthropic|googleai|ollama|scripted; "" → the first
	// provider with a setting, in this order: openai (OpenAIAPIKey or
	// OpenAIBaseURL), anthropic (AnthropicAPIKey), googleai (GoogleAPIKey),
	// else ollama.
	Provider string
	// Model is the provider's model name; "" → a per-provider default. It is
	// required with OpenAIBaseURL, whose server decides the model names.
	Model string

	// Provider endpoints and keys (OPENAI_BASE_URL, OPENAI_API_KEY,
	// ANTHROPIC_API_KEY, GOOGLE_API_KEY, OLLAMA_BASE_URL). Keys are secrets:
	// the adapter redacts them from every error and log line.
	OpenAIBaseURL, OpenAIAPIKey, AnthropicAPIKey, GoogleAPIKey, OllamaBaseURL string
	// GeminiBaseURL is Gemini's OpenAI-compatible endpoint (provider
	// googleai); "" → Google's. Tests point it at a fake server.
	GeminiBaseURL string
	// AnthropicBaseURL is Anthropic's API root; "" → Anthropic's. Tests
	// point it at a fake server.
	AnthropicBaseURL string

	Timeout     time.Duration // per attempt; 0 → 120s
	MaxAttempts int           // 0 → 3
	MaxInFlight int           // calls on the wire at once; 0 → 16
	HTTPClient  *http.Client  // optional, for tests; never mutated

	// RetryBaseDelay is the first backoff step, doubled per attempt; 0 → 500ms.
	RetryBaseDelay time.Duration
	// MaxRetryDelay caps a backoff step; a Retry-After longer than this ends
	// the call instead of waiting. 0 → 30s.
	MaxRetryDelay time.Duration
	// OnRetry, when set, is called before each backoff wait.
	OnRetry func(Retry)

	// OutputMode is how stage calls with a schema ask for their reply
	// (tool, json_schema, json_object, text); "" → the provider's default
	// (DefaultOutputMode). A call's own ModelRequest.OutputMode wins.
	OutputMode workflow.OutputMode
}

// provider returns the provider Config selects, applying the documented
// derivation for an empty Provider.
func (c Config) provider() string {
	p := strings.ToLower(strings.TrimSpace(c.Provider))
	if p != "" {
		return p
	}
	switch {
	case c.OpenAIAPIKey != "" || c.OpenAIBaseURL != "":
		return ProviderOpenAI
	case c.AnthropicAPIKey != "":
		return ProviderAnthropic
	case c.GoogleAPIKey != "":
		return ProviderGoogleAI
	}
	return ProviderOllama
}

// SelectedProvider returns the provider c selects: Provider, or when it is
// empty the one derived from the settings present (see Config.Provider).
func (c Config) SelectedProvider() string { return c.provider() }

// UnusedSettings names the provider settings (environment variables) that
// are set although neither c's provider nor any of inUse (the providers the
// models configuration routes to besides it) reads them, so a start-up
// warning can say that, for example, OPENAI_BASE_URL is ignored because
// LLM_PROVIDER=ollama. It never returns a value, only names.
func (c Config) UnusedSettings(inUse ...string) []string {
	used := map[string]bool{c.provider(): true}
	for _, p := range inUse {
		used[strings.ToLower(strings.TrimSpace(p))] = true
	}
	var unused []string
	for _, s := range []struct{ name, value, provider string }{
		{"OPENAI_BASE_URL", c.OpenAIBaseURL, ProviderOpenAI},
		{"OPENAI_API_KEY", c.OpenAIAPIKey, ProviderOpenAI},
		{"ANTHROPIC_API_KEY", c.AnthropicAPIKey, ProviderAnthropic},
		{"GOOGLE_API_KEY", c.GoogleAPIKey, ProviderGoogleAI},
		{"OLLAMA_BASE_URL", c.OllamaBaseURL, ProviderOllama},
	} {
		if s.value != "" && !used[s.provider] {
			unused = append(unused, s.name)
		}
	}
	return unused
}

// model returns the model name Config selects.
func (c Config) model() string {
	if c.Model != "" {
		return c.Model
	}
	return DefaultModel(c.provider())
}

// Validate reports every problem of c at once, as one KindInvalid error whose
// message names the environment variables to fix. It never quotes a key or a
// URL, so its message is safe to log.
func (c Config) Validate() error {
	var problems []string
	add := func(p string) { problems = append(problems, p) }
	switch c.provider() {
	case ProviderOpenAI:
		if c.OpenAIBaseURL != "" && !validHTTPURL(c.OpenAIBaseURL) {
			add("OPENAI_BASE_URL is not a valid http(s) URL")
		}
		if c.OpenAIAPIKey == "" && c.OpenAIBaseURL == "" {
			add("OPENAI_API_KEY is required for LLM_PROVIDER=openai (or set OPENAI_BASE_URL for a server that needs no key)")
		}
		if c.OpenAIBaseURL != "" && c.Model == "" {
			add("LLM_MODEL is required with OPENAI_BASE_URL: the server decides its model names")
		}
	case ProviderAnthropic:
		if c.AnthropicAPIKey == "" {
			add("ANTHROPIC_API_KEY is required for LLM_PROVIDER=anthropic")
		}
	case ProviderGoogleAI:
		if c.GoogleAPIKey == "" {
			add("GOOGLE_API_KEY is required for LLM_PROVIDER=googleai")
		}
	case ProviderOllama:
		if c.OllamaBaseURL != "" && !validHTTPURL(c.OllamaBaseURL) {
			add("OLLAMA_BASE_URL is not a valid http(s) URL")
		}
	case ProviderScripted:
	default:
		add("LLM_PROVIDER must be one of openai, anthropic, googleai, ollama, scripted")
	}
	if c.Timeout < 0 {
		add("the LLM timeout must not be negative")
	}
	if c.MaxAttempts < 0 {
		add("the LLM max attempts must not be negative")
	}
	if c.MaxInFlight < 0 {
		add("the LLM max in-flight calls must not be negative")
	}
	if c.RetryBaseDelay < 0 || c.MaxRetryDelay < 0 {
		add("the LLM retry delays must not be negative")
	}
	if p := c.provider(); p != ProviderScripted {
		if problem := checkOutputMode(p, c.OutputMode); problem != "" {
			add(problem)
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return workflow.Errorf(workflow.KindInvalid, "llm config: %s", strings.Join(problems, "; "))
}

// withDefaults returns c with every zero field set to its default.
func (c Config) withDefaults() Config {
	c.Provider = c.provider()
	c.Model = c.model()
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.MaxInFlight == 0 {
		c.MaxInFlight = DefaultMaxInFlight
	}
	if c.RetryBaseDelay == 0 {
		c.RetryBaseDelay = DefaultRetryBaseDelay
	}
	if c.MaxRetryDelay == 0 {
		c.MaxRetryDelay = DefaultMaxRetryDelay
	}
	if c.OpenAIBaseURL == "" {
		c.OpenAIBaseURL = defaultOpenAIBaseURL
	}
	if c.AnthropicBaseURL == "" {
		c.AnthropicBaseURL = defaultAnthropicURL
	}
	if c.GeminiBaseURL == "" {
		c.GeminiBaseURL = defaultGeminiBaseURL
	}
	if c.OllamaBaseURL == "" {
		c.OllamaBaseURL = defaultOllamaBaseURL
	}
	return c
}

// secrets returns the non-empty API keys of c, which must never leave the
// adapter in an error or a log line.
func (c Config) secrets() []string {
	var out []string
	for _, s := range []string{c.OpenAIAPIKey, c.AnthropicAPIKey, c.GoogleAPIKey} {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

func validHTTPURL(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}
