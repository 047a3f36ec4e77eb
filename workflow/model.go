package workflow

import "context"

// ModelRequest is one chat completion request.
type ModelRequest struct {
	Messages []PromptMessage
	// JSON asks the provider for a JSON object reply where it supports it.
	JSON bool
	// Output, when set, is the reply's schema for providers with native
	// structured output (OutputTool, OutputJSONSchema); the adapter picks
	// the mode by provider capability and OutputMode.
	Output *OutputSchema
	// OutputMode, when set, overrides the adapter's default mode for this
	// call (the YAML models.<stage>.outputMode); "" lets the adapter choose.
	OutputMode OutputMode
	// MaxTokens bounds the reply; 0 means the adapter's default.
	MaxTokens int
	// Temperature is the sampling temperature; nil means the configured
	// stage's (llm.Router), else the provider's default.
	Temperature *float64
	// Stage is used for metrics and logs only (and by a router to pick the
	// stage's model).
	Stage Stage
	// CacheKey groups requests that share a prompt prefix, sent as the
	// OpenAI-compatible prompt_cache_key ("<workflowId>:<stage>", DESIGN
	// §10.1); "" sends none.
	CacheKey string
	// CachePrefix is how many leading Messages stay byte-identical between
	// requests of the same CacheKey. Providers with explicit cache markers
	// (Anthropic cache_control) get the marker on the last of them; 0 marks
	// nothing.
	CachePrefix int
	// CacheSealed, when beyond CachePrefix, is how many leading Messages
	// change only now and then (Stage 1's through the documents index,
	// which changes at a seal or a new document, DESIGN §11.1): a
	// provider with explicit markers gets a second one on the last of
	// them; 0 marks nothing more.
	CacheSealed int
	// Facts is what the prompt was built from, in structured form. The
	// provider adapters ignore it; a stand-in model that answers without
	// reading the prompt (the offline model of LLM_PROVIDER=scripted)
	// decides from it. A request rebuilt from a recorded prompt (an admin
	// replay, an experiment) carries none.
	Facts PromptFacts
	// Stream, when set, is called by a model that streams with each piece
	// of the reply as it arrives, in order: the reply's text, or the
	// native tool call's argument text (OutputTool). The pieces together
	// are the reply's Text. It is called from one goroutine at a time
	// (not necessarily Generate's), never after Generate returns; it must
	// not block. A model that cannot stream never calls it; one whose
	// streamed attempt failed midway retries unstreamed, so the pieces
	// may stop short of Text.
	Stream func(chunk string)
}

// PromptFacts is what a model call's prompt was built from, for a model
// that does not read prose. Its slices and pointers are shared with the
// run that made the call: a model reads them and never changes them.
type PromptFacts struct {
	// Messages are the workflow's messages the prompt was built from, in
	// seq order: those of its history, documents index and user prompt
	// (Stage 1, the plan, Stage 2 and the compaction call).
	Messages []Message
	// Selection is the Stage 1 selection a Stage 2 prompt fills.
	Selection *Selection
	// Compacted are the history entries a compaction call summarises,
	// oldest first, and Previous the summary they extend (nil: none).
	Compacted []Message
	Previous  *Message
}

// ModelResponse is a model's reply and its usage.
type ModelResponse struct {
	Text             string
	Model            string
	PromptTokens     int
	CompletionTokens int
	// CachedTokens is how many of PromptTokens the provider served from its
	// prompt cache, as its usage reported them (0 when it reports none);
	// CacheWriteTokens how many it wrote to the cache (Anthropic's
	// cache_creation_input_tokens).
	CachedTokens     int
	CacheWriteTokens int
	// Truncated reports that the provider stopped the reply at the token
	// limit (OpenAI-compatible finish_reason "length", Anthropic
	// stop_reason "max_tokens"); StopReason is the provider's own
	// value. Run.Generate never hands a truncated reply to a Check.
	Truncated  bool
	StopReason string
	// OutputMode is the mode the call was sent with (after any fallback
	// from an inexpressible schema); "" when the model does not say (the
	// scripted stand-in), which the trace records as text.
	OutputMode OutputMode
	// Retries is how many failed attempts (429, 5xx, timeouts) the
	// adapter retried before this reply; the trace records it.
	Retries int
}

// Model is the engine's view of an LLM. Implementations honour ctx
// cancellation at once, retry transient failures themselves, and return
// errors of kind KindUnavailable when the provider could not answer (the
// round fails with stop reason llm_error and can be resumed) and KindInvalid
// when the request itself was refused.
type Model interface {
	Generate(ctx context.Context, req ModelRequest) (ModelResponse, error)
}

// ModelFunc adapts a function to the Model interface.
type ModelFunc func(ctx context.Context, req ModelRequest) (ModelResponse, error)

// Generate calls f.
func (f ModelFunc) Generate(ctx context.Context, req ModelRequest) (ModelResponse, error) {
	return f(ctx, req)
}

// ApproxTokens estimates the tokens of text at about four bytes a token,
// at least one for non-empty text: the usage a Model reports when its
// provider reports none and no tokenizer is at hand (the scripted model;
// llm should its tokenizer's tables fail to load).
func ApproxTokens(text string) int {
	if text == "" {
		return 0
	}
	return (len(text) + 3) / 4
}

// PromptTokens estimates a chat prompt's tokens, counting each message's
// text with count: that text plus OpenAI's documented overhead of about 4
// tokens a message and 3 for the reply.
func PromptTokens(msgs []PromptMessage, count func(string) int) int {
	n := 3
	for _, m := range msgs {
		n += 4 + count(m.Content)
	}
	return n
}
