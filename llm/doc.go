// Package llm is twostep's one adapter over langchaingo: it turns the
// engine's workflow.ModelRequest into a chat call to the configured provider
// (openai and every OpenAI-compatible server, anthropic, googleai — Gemini
// through its OpenAI-compatible endpoint — and ollama) and
// the reply into a workflow.ModelResponse with token usage.
//
// Model guarantees, for every provider:
//   - each attempt is bounded by Config.Timeout; 429, 5xx, timeouts and
//     transport failures are retried with exponential backoff and jitter
//     (each wait uniform in [step/2, step], step = RetryBaseDelay·2^(n-1)
//     capped at MaxRetryDelay), honouring Retry-After, up to
//     Config.MaxAttempts attempts; other 4xx are never retried;
//   - failures are *workflow.Error values: KindUnavailable when the provider
//     could not answer ("try later"), KindInvalid when it refused the request;
//   - the caller's context cancellation is returned as-is (errors.Is holds for
//     context.Canceled and context.DeadlineExceeded) and never retried;
//   - at most Config.MaxInFlight calls are on the wire at once per Model;
//   - usage comes from the provider; when it reports none, it is estimated
//     with an embedded cl100k tokenizer, never downloaded. PromptTokens
//     counts every input token on every provider (Anthropic's input_tokens
//     plus its cache reads and writes); CachedTokens and CacheWriteTokens
//     are the parts of it the provider reported served from and written to
//     its prompt cache, 0 when it reported none;
//   - a request's cache fields become the provider's markers (cache.go):
//     prompt_cache_key = CacheKey on OpenAI and OpenAI-compatible servers,
//     Anthropic cache_control on the last block of message CachePrefix-1,
//     nothing for Gemini (implicit caching) and Ollama; a request carrying
//     them refused with HTTP 400 is sent once more without them;
//   - API keys never appear in errors or logs;
//   - a call with an OutputSchema is sent in the output mode chosen per
//     call (ModelRequest.OutputMode, then Config.OutputMode, then the
//     provider's default: tool for OpenAI and Anthropic, json_schema for
//     Gemini and Ollama); a schema not in strict form falls back to
//     json_object with the reason logged on OpenAI, OpenAI-compatible
//     servers and Gemini (Anthropic and Ollama take it as it is), and a
//     native request refused with HTTP 400 is sent once more without it; ModelResponse.OutputMode says
//     which mode was used. Ollama is reached through its /v1 endpoint;
//   - a request with a Stream is streamed (stream.go; DESIGN §11.2): SSE
//     with stream_options.include_usage on OpenAI-compatible servers
//     (Gemini and Ollama included), Messages API events on Anthropic;
//     usage, cached tokens and the finish reason are read from the stream,
//     and each piece of the reply text (or of the forced tool's argument
//     text) is handed to Stream as it arrives. A server that answers a
//     streamed request whole is read as one stream (no second request);
//     one that refuses it with HTTP 400 is asked once more unstreamed, and
//     the Model's later calls are unstreamed; an attempt that failed after
//     its reply began to stream is retried unstreamed.
//
// Scripted is the one scripted model, a thread-safe stand-in for a provider
// in the tests, the offline gateway and the demo: it replies from a list or
// a function and records every call.
//
// No other twostep package imports langchaingo.
package llm
