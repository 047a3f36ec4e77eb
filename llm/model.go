package llm

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"github.com/tmc/langchaingo/llms"

	"github.com/twostep/twostep/workflow"
)

// Model is the engine's LLM over a langchaingo provider client. It is safe
// for concurrent use; make one per process so MaxInFlight bounds the process.
type Model struct {
	provider, model string
	client          client
	timeout         time.Duration
	maxAttempts     int
	baseDelay       time.Duration
	maxDelay        time.Duration
	onRetry         func(Retry)
	slots           chan struct{} // one token per call on the wire
	secrets         []string
	tokens          *Tokenizer
	rnd             func(n int64) int64
	probe           *prober
	outputMode      workflow.OutputMode // the stage calls' mode unless a call overrides it
	// unmarked is set once the provider refused a call for its prompt-cache
	// markers: every later call of this Model is sent without them.
	unmarked atomic.Bool
	// unstreamed is set once the server refused a streamed call that it
	// then answered unstreamed: every later call is sent unstreamed.
	unstreamed atomic.Bool
}

var _ workflow.Model = (*Model)(nil)

// New validates cfg and builds the Model for its provider. It makes no
// network call. Provider "scripted" is refused: a script cannot come from the
// environment, so callers build a Scripted.
func New(ctx context.Context, cfg Config) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	m := &Model{
		provider:    cfg.Provider,
		model:       cfg.Model,
		timeout:     cfg.Timeout,
		maxAttempts: cfg.MaxAttempts,
		baseDelay:   cfg.RetryBaseDelay,
		maxDelay:    cfg.MaxRetryDelay,
		onRetry:     cfg.OnRetry,
		slots:       make(chan struct{}, cfg.MaxInFlight),
		secrets:     cfg.secrets(),
		tokens:      &Tokenizer{},
		rnd:         jitter,
		outputMode:  cfg.OutputMode,
	}
	if m.outputMode == "" {
		m.outputMode = DefaultOutputMode(cfg.Provider)
	}
	c, err := newClient(ctx, cfg)
	if err != nil {
		var we *workflow.Error
		if errors.As(err, &we) {
			return nil, err
		}
		return nil, workflow.WrapKind(workflow.KindInvalid, m.redact(err), "llm.New: %s client", cfg.Provider)
	}
	m.client = c
	m.probe = newProber(cfg, m.redact)
	return m, nil
}

// Name returns "provider/model", for traces and logs.
func (m *Model) Name() string { return m.provider + "/" + m.model }

// Close cancels the readiness probe in flight, if any, and waits for it to
// end, then releases the provider client's resources. Calls in flight are
// not waited for: their callers own them.
func (m *Model) Close() error {
	if m.probe != nil {
		m.probe.close()
	}
	if m.client.close != nil {
		return m.client.close()
	}
	return nil
}

// Generate sends req to the provider, retrying transient failures, and
// returns the reply text with its token usage. See the package comment for
// the retry, error and cancellation guarantees.
func (m *Model) Generate(ctx context.Context, req workflow.ModelRequest) (resp workflow.ModelResponse, err error) {
	defer workflow.Wrap(&err, "llm.Generate(%s)", m.Name())
	msgs, err := toMessages(req.Messages)
	if err != nil {
		return workflow.ModelResponse{}, err
	}
	plan := m.planOutput(req)
	opts := append(m.client.callOptions(req), plan.opts...)
	log := zerolog.Ctx(ctx)
	if plan.fallback != "" {
		log.Info().Str("model", m.Name()).Str("stage", string(req.Stage)).Str("outputMode", string(plan.mode)).
			Str("reason", plan.fallback).Msg("native structured output not used for this call: the schema cannot be sent")
	}
	cache := m.planCache(req)
	if m.unmarked.Load() {
		cache = cacheMarks{}
	}
	callCtx := withBodyPatch(ctx, newBodyPatch(plan.patch, cache))
	stream, refusedStream := req.Stream != nil && !m.unstreamed.Load(), false
	for attempt := 1; ; attempt++ {
		tap := m.tap(req, plan, stream)
		out, f := m.attempt(callCtx, msgs, opts, tap)
		if ctxErr := ctx.Err(); ctxErr != nil {
			return workflow.ModelResponse{}, ctxErr
		}
		if f == nil {
			m.streamed(ctx, req, tap, refusedStream)
			resp := m.response(req, out, plan)
			resp.Retries = attempt - 1
			return resp, nil
		}
		if tap != nil && tap.stop() {
			// Its pieces are out: a retry is sent unstreamed, so no
			// piece is handed over twice (the reply is the truth).
			stream = false
		}
		if refusedNative(plan, f) {
			// Sent once more without the schema; never loops: the new
			// plan is not native.
			plan = m.plainPlan(req, workflow.OutputJSONObject, "the provider refused the native request: "+f.err.Error())
			log.Warn().Str("model", m.Name()).Str("stage", string(req.Stage)).Str("outputMode", string(plan.mode)).
				Str("reason", plan.fallback).Msg("native structured output refused; sending the call without its schema")
			opts, callCtx = append(m.client.callOptions(req), plan.opts...), withBodyPatch(ctx, newBodyPatch(nil, cache))
			continue
		}
		if refusedCacheMarks(plan, cache, f) {
			// Sent once more without them, and so is every later call;
			// never loops: none are left.
			if m.unmarked.CompareAndSwap(false, true) {
				log.Warn().Str("model", m.Name()).Str("stage", string(req.Stage)).Str("error", f.err.Error()).
					Msg("the provider refused the request for its prompt-cache markers; this model's calls are sent without them from now on")
			}
			cache = cacheMarks{}
			callCtx = withBodyPatch(ctx, newBodyPatch(plan.patch, cache))
			continue
		}
		if stream && f.status == http.StatusBadRequest {
			// Perhaps a server that refuses to stream: sent once more
			// unstreamed (remembered when that one is answered).
			stream, refusedStream = false, true
			continue
		}
		if !f.retryable || attempt >= m.maxAttempts {
			return workflow.ModelResponse{}, retryExhausted(*f, attempt)
		}
		delay, ok := backoff(attempt, m.baseDelay, m.maxDelay, f.retryAfter, m.rnd)
		if !ok {
			return workflow.ModelResponse{}, workflow.WrapKind(workflow.KindUnavailable, f.err,
				"%s asked to retry after %s, longer than the %s allowed", m.provider, delay, m.maxDelay)
		}
		log.Warn().Str("model", m.Name()).Str("stage", string(req.Stage)).Int("attempt", attempt).
			Int("status", f.status).Dur("delay", delay).Str("error", f.err.Error()).Msg("llm call failed, retrying")
		if m.onRetry != nil {
			m.onRetry(Retry{Attempt: attempt, Delay: delay, Status: f.status, Err: f.err})
		}
		if err := sleep(ctx, delay); err != nil {
			return workflow.ModelResponse{}, err
		}
	}
}

// attempt makes one bounded call while holding an in-flight slot. It returns
// the reply, or the classified failure.
func (m *Model) attempt(ctx context.Context, msgs []llms.MessageContent, opts []llms.CallOption, tap *streamTap) (*llms.ContentResponse, *failure) {
	select {
	case m.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, &failure{err: ctx.Err()}
	}
	defer func() { <-m.slots }()
	actx, cancel := context.WithTimeout(ctx, m.timeout)
	defer cancel()
	obs := &observation{}
	if tap != nil {
		actx = withStreamTap(actx, tap)
		opts = append(opts[:len(opts):len(opts)], llms.WithStreamingFunc(ignoreChunk))
	}
	out, err := m.client.llm.GenerateContent(withObservation(actx, obs), msgs, opts...)
	if tap != nil {
		tap.stop()
	}
	obs.mu.Lock()
	if obs.unmarked != nil {
		zerolog.Ctx(ctx).Warn().Str("model", m.Name()).Str("reason", obs.unmarked.Error()).
			Msg("the prompt-cache breakpoint could not be placed; the request was sent unmarked")
	}
	obs.mu.Unlock()
	if err == nil && (out == nil || len(out.Choices) == 0) {
		err = errors.New("the reply has no choices")
	}
	if err != nil {
		f := m.classify(actx, obs, err)
		return nil, &f
	}
	return out, nil
}

// response builds the engine's view of a reply: the forced tool call's
// arguments in tool mode, else the text of every choice (Anthropic returns
// one choice per content block), the mode it was asked in, and the usage
// the provider reported (cached tokens included: reportedUsage), estimated
// offline where it reported none.
func (m *Model) response(req workflow.ModelRequest, out *llms.ContentResponse, plan outputPlan) workflow.ModelResponse {
	resp := workflow.ModelResponse{Text: replyText(out.Choices, plan.tool), Model: m.Name(), OutputMode: plan.mode}
	resp.StopReason, resp.Truncated = stopReason(out.Choices)
	u := reportedUsage(out.Choices[0])
	resp.PromptTokens, resp.CompletionTokens = u.prompt, u.completion
	resp.CachedTokens, resp.CacheWriteTokens = u.cached, u.cacheWrite
	if resp.PromptTokens == 0 {
		resp.PromptTokens = workflow.PromptTokens(req.Messages, m.tokens.Count)
	}
	if resp.CompletionTokens == 0 {
		resp.CompletionTokens = m.tokens.Count(resp.Text)
	}
	return resp
}

// tokenLimitReasons are the stop reasons langchaingo passes on for a reply
// cut at the token limit: the OpenAI-compatible finish_reason (also
// Gemini's, reached through that endpoint) and Anthropic's stop_reason.
var tokenLimitReasons = []string{"length", "max_tokens"}

// stopReason returns the reply's stop reason (the last choice that has
// one: Anthropic returns one choice per content block) and whether it
// means the reply was cut at the token limit.
func stopReason(choices []*llms.ContentChoice) (string, bool) {
	reason := ""
	for _, c := range choices {
		if c != nil && c.StopReason != "" {
			reason = c.StopReason
		}
	}
	return reason, slices.Contains(tokenLimitReasons, reason)
}
