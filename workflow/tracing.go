package workflow

import (
	"context"
)

// Tracer opens the spans of the engine's work (DESIGN §9.5): each run of
// a round, its steps, every model call, every action and every store
// commit. It is the engine's view of distributed tracing: package
// telemetry implements it over OpenTelemetry and owns the span names and
// attributes (the GenAI semantic conventions); workflow imports no tracing
// library. Without one (engine.Config.Tracer nil) nothing is traced and
// nothing is spent.
//
// Implementations must be safe for concurrent use and cheap: they are
// called from the goroutine running a round.
type Tracer interface {
	// Start opens a span described by s as a child of ctx's span (a round
	// span instead joins s.Origin's trace) and returns ctx carrying it.
	Start(ctx context.Context, s SpanStart) (context.Context, Span)
	// TraceParent returns the W3C traceparent of ctx's span, "" when ctx
	// carries none. The engine persists it (Workflow.TraceContext) so a
	// round run later, on any instance, joins that trace.
	TraceParent(ctx context.Context) string
}

// Span is one open span.
type Span interface {
	// ModelReply records a model call's reply on its span (SpanModelCall
	// only): the response (model, usage, finish reason), the outcome
	// ("ok", "rejected", "error", "cancelled") and the rejection or error
	// text ("" when none).
	ModelReply(resp ModelResponse, outcome, problem string)
	// End closes the span; a non-nil err marks it failed.
	End(err error)
}

// SpanKind says what a span covers.
type SpanKind string

// The spans the engine opens.
const (
	// SpanRound is one run of a round, from its claim to its end or
	// interruption; a round resumed after a crash, a shutdown or a Resume
	// has a new one, linked to the previous one (SpanStart.Previous).
	SpanRound SpanKind = "round"
	// SpanStep is one step (every phase this run makes of it).
	SpanStep SpanKind = "step"
	// SpanModelCall is one model call (attempt), Stage and Attempt set.
	SpanModelCall SpanKind = "chat"
	// SpanAction is one action run, Action set.
	SpanAction SpanKind = "action"
	// SpanCommit is one Store.Commit.
	SpanCommit SpanKind = "commit"
)

// SpanStart describes a span to open. Fields not meaningful for Kind are
// zero.
type SpanStart struct {
	Kind       SpanKind
	WorkflowID string
	Mode       ModeName
	Round      int
	Step       int
	// Stage, Attempt, Prompt, MaxTokens and JSON describe a model call;
	// Prompt is only read when the tracer records message content
	// (redacted).
	Stage     Stage
	Attempt   int
	Prompt    []PromptMessage
	MaxTokens int
	JSON      bool
	// Early marks a Stage 2 call started while Stage 1's reply still
	// streamed (ModelCall.Early); its span ends when the mode settles it,
	// with outcome "discarded" when its reply was not used.
	Early bool
	// Action names the action of SpanAction.
	Action string
	// Origin is the traceparent of the request that started or resumed
	// the round, Previous the one of the round's previous run ("" when
	// none); round spans only.
	Origin, Previous string
}

// TraceContext holds the W3C traceparents of a workflow's running round
// (DESIGN §9.5). It travels in the stored state, so it costs no extra
// store round trip: Origin is set by the request that started or resumed
// the round, Round by each run of it, so the next run (on any instance)
// links to it.
type TraceContext struct {
	Origin string `json:"origin,omitempty"`
	Round  string `json:"round,omitempty"`
}
