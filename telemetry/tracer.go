package telemetry

import (
	"context"
	"encoding/json"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/twostep/twostep/redact"
	"github.com/twostep/twostep/workflow"
)

// ScopeName is the instrumentation scope of the engine's spans.
const ScopeName = "github.com/twostep/twostep/workflow"

// Attribute keys. The gen_ai.* ones follow the OpenTelemetry GenAI
// semantic conventions (gen_ai.system is the older name of
// gen_ai.provider.name; both are set, as backends read either); twostep.*
// are this gateway's own.
const (
	keyOperation     = attribute.Key("gen_ai.operation.name")
	keySystem        = attribute.Key("gen_ai.system")
	keyProvider      = attribute.Key("gen_ai.provider.name")
	keyRequestModel  = attribute.Key("gen_ai.request.model")
	keyResponseModel = attribute.Key("gen_ai.response.model")
	keyInputTokens   = attribute.Key("gen_ai.usage.input_tokens")
	keyOutputTokens  = attribute.Key("gen_ai.usage.output_tokens")
	// The parts of gen_ai.usage.input_tokens the provider served from its
	// prompt cache and wrote to it (semantic conventions v1.40 and later).
	keyCacheRead     = attribute.Key("gen_ai.usage.cache_read.input_tokens")
	keyCacheCreation = attribute.Key("gen_ai.usage.cache_creation.input_tokens")
	keyFinish        = attribute.Key("gen_ai.response.finish_reasons")
	keyInput         = attribute.Key("gen_ai.input.messages")
	keyOutput        = attribute.Key("gen_ai.output.messages")
	keyToolName      = attribute.Key("gen_ai.tool.name")
	keyMaxTokens     = attribute.Key("gen_ai.request.max_tokens")
	keyOutputType    = attribute.Key("gen_ai.output.type")

	keyWorkflow = attribute.Key("twostep.workflow.id")
	keyMode     = attribute.Key("twostep.mode")
	keyRound    = attribute.Key("twostep.round")
	keyStep     = attribute.Key("twostep.step")
	keyStage    = attribute.Key("twostep.stage")
	keyAttempt  = attribute.Key("twostep.attempt")
	keyOutcome  = attribute.Key("twostep.outcome")
	keyRetries  = attribute.Key("twostep.retries")
	keyProblem  = attribute.Key("twostep.problem")
	keyResumed  = attribute.Key("twostep.resumed")
	// keyEarly marks a Stage 2 call started while Stage 1 still streamed
	// (DESIGN §11.2); a discarded one ends with outcome "discarded".
	keyEarly = attribute.Key("twostep.stage2.early")
)

// Span names (low cardinality; GenAI spans are "{operation} {model}").
const (
	SpanRound  = "workflow.round"
	SpanStep   = "workflow.step"
	SpanCommit = "store.commit"
)

// Options configure a Tracer.
type Options struct {
	// RequestModel names the model ("provider/model") a stage's call is
	// sent to first; nil or "" leaves gen_ai.request.model unset.
	RequestModel func(workflow.Stage) string
	// Redactor scrubs every text a span records (message content, error
	// descriptions); nil redacts nothing.
	Redactor *redact.Redactor
	// CaptureContent records prompts and replies as gen_ai.input.messages
	// and gen_ai.output.messages (redacted) and a rejected reply's
	// problems. nil means off (Setup reads CaptureContentEnv).
	CaptureContent *bool
}

// Tracer implements workflow.Tracer over an OpenTelemetry tracer
// provider. It is safe for concurrent use.
type Tracer struct {
	tracer  trace.Tracer
	opts    Options
	capture bool
	prop    propagation.TraceContext
}

var _ workflow.Tracer = (*Tracer)(nil)

// NewTracer returns a Tracer over tp (tests pass an in-memory provider).
func NewTracer(tp trace.TracerProvider, opts Options) *Tracer {
	return &Tracer{tracer: tp.Tracer(ScopeName), opts: opts, capture: opts.CaptureContent != nil && *opts.CaptureContent}
}

// TraceParent returns ctx's span context as a W3C traceparent.
func (t *Tracer) TraceParent(ctx context.Context) string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ""
	}
	carrier := propagation.MapCarrier{}
	t.prop.Inject(ctx, carrier)
	return carrier.Get("traceparent")
}

// remote parses a traceparent into a span context (invalid when it is not
// one).
func (t *Tracer) remote(traceparent string) trace.SpanContext {
	if traceparent == "" {
		return trace.SpanContext{}
	}
	ctx := t.prop.Extract(context.Background(), propagation.MapCarrier{"traceparent": traceparent})
	return trace.SpanContextFromContext(ctx)
}

// Start opens the span s describes.
func (t *Tracer) Start(ctx context.Context, s workflow.SpanStart) (context.Context, workflow.Span) {
	var attrs []attribute.KeyValue
	if s.WorkflowID != "" { // the model calls of an action inherit them from its span
		attrs = append(attrs, keyWorkflow.String(s.WorkflowID), keyRound.Int(s.Round), keyStep.Int(s.Step))
	}
	if s.Mode != "" {
		attrs = append(attrs, keyMode.String(string(s.Mode)))
	}
	opts := []trace.SpanStartOption{}
	name := string(s.Kind)
	switch s.Kind {
	case workflow.SpanRound:
		name = SpanRound
		if origin := t.remote(s.Origin); origin.IsValid() && !trace.SpanContextFromContext(ctx).IsValid() {
			ctx = trace.ContextWithRemoteSpanContext(ctx, origin)
		}
		if prev := t.remote(s.Previous); prev.IsValid() {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: prev}))
			attrs = append(attrs, keyResumed.Bool(true))
		}
	case workflow.SpanStep:
		name = SpanStep
	case workflow.SpanCommit:
		name = SpanCommit
	case workflow.SpanAction:
		name = "execute_tool " + s.Action
		attrs = append(attrs, keyOperation.String("execute_tool"), keyToolName.String(s.Action))
	case workflow.SpanModelCall:
		provider, model := splitModel(t.requestModel(s.Stage))
		name = "chat"
		if model != "" {
			name += " " + model
			attrs = append(attrs, keyRequestModel.String(model))
		}
		if provider != "" {
			attrs = append(attrs, keySystem.String(provider), keyProvider.String(provider))
		}
		attrs = append(attrs, keyOperation.String("chat"), keyStage.String(string(s.Stage)))
		if s.Attempt > 0 {
			attrs = append(attrs, keyAttempt.Int(s.Attempt))
		}
		if s.Early {
			attrs = append(attrs, keyEarly.Bool(true))
		}
		if s.MaxTokens > 0 {
			attrs = append(attrs, keyMaxTokens.Int(s.MaxTokens))
		}
		if s.JSON {
			attrs = append(attrs, keyOutputType.String("json"))
		}
		if t.capture {
			attrs = append(attrs, keyInput.String(t.inputMessages(s.Prompt)))
		}
		opts = append(opts, trace.WithSpanKind(trace.SpanKindClient))
	}
	opts = append(opts, trace.WithAttributes(attrs...))
	ctx, span := t.tracer.Start(ctx, name, opts...)
	return ctx, &otelSpan{span: span, t: t}
}

func (t *Tracer) requestModel(stage workflow.Stage) string {
	if t.opts.RequestModel == nil {
		return ""
	}
	return t.opts.RequestModel(stage)
}

// splitModel splits "provider/model" (the model names llm reports); a
// name without a provider is all model. The provider is named as the
// GenAI conventions know it (googleai is gcp.gemini).
func splitModel(name string) (provider, model string) {
	provider, model, ok := strings.Cut(name, "/")
	if !ok {
		return "", name
	}
	if provider == "googleai" {
		provider = "gcp.gemini"
	}
	return provider, model
}

func (t *Tracer) redact(s string) string { return t.opts.Redactor.String(s) }

// genAIMessage is one message of gen_ai.input.messages and
// gen_ai.output.messages: a role and its text parts.
type genAIMessage struct {
	Role         string      `json:"role"`
	Parts        []genAIPart `json:"parts"`
	FinishReason string      `json:"finish_reason,omitempty"`
}

type genAIPart struct {
	Type    string `json:"type"`
	Content string `json:"content"`
}

func (t *Tracer) inputMessages(prompt []workflow.PromptMessage) string {
	msgs := make([]genAIMessage, 0, len(prompt))
	for _, m := range prompt {
		msgs = append(msgs, genAIMessage{Role: m.Role, Parts: []genAIPart{{Type: "text", Content: t.redact(m.Content)}}})
	}
	b, _ := json.Marshal(msgs)
	return string(b)
}

// otelSpan is an open span.
type otelSpan struct {
	span trace.Span
	t    *Tracer
}

// ModelReply records the reply's model, usage (input tokens counting the
// cached ones, and the cache reads and writes, 0 when the provider
// reported none), finish reason and outcome; a failed call's error
// becomes the span status.
func (s *otelSpan) ModelReply(resp workflow.ModelResponse, outcome, problem string) {
	_, model := splitModel(resp.Model)
	attrs := []attribute.KeyValue{
		keyInputTokens.Int(resp.PromptTokens), keyOutputTokens.Int(resp.CompletionTokens),
		keyCacheRead.Int(resp.CachedTokens), keyCacheCreation.Int(resp.CacheWriteTokens),
		keyOutcome.String(outcome),
	}
	if model != "" {
		attrs = append(attrs, keyResponseModel.String(model))
	}
	if resp.StopReason != "" {
		attrs = append(attrs, keyFinish.StringSlice([]string{resp.StopReason}))
	}
	if resp.Retries > 0 {
		attrs = append(attrs, keyRetries.Int(resp.Retries))
	}
	if s.t.capture {
		if outcome != "error" && outcome != "cancelled" {
			b, _ := json.Marshal([]genAIMessage{{Role: "assistant", FinishReason: resp.StopReason,
				Parts: []genAIPart{{Type: "text", Content: s.t.redact(resp.Text)}}}})
			attrs = append(attrs, keyOutput.String(string(b)))
		}
		if outcome == "rejected" && problem != "" {
			attrs = append(attrs, keyProblem.String(s.t.redact(problem)))
		}
	}
	s.span.SetAttributes(attrs...)
	if outcome == "error" {
		s.span.SetStatus(codes.Error, s.t.redact(problem))
	}
}

// End closes the span; err (redacted) becomes an error status.
func (s *otelSpan) End(err error) {
	if err != nil {
		s.span.SetStatus(codes.Error, s.t.redact(err.Error()))
	}
	s.span.End()
}
