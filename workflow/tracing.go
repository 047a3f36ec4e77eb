package workflow

import (
	"context"
	"time"
)

// Tracer opens the spans of the engine's work (DESIGN §9.5): each run of
// a round, its steps, every model call, every action and every store
// commit. It is the engine's view of distributed tracing: package
// telemetry implements it over OpenTelemetry and owns the span names and
// attributes (the GenAI semantic conventions); workflow imports no tracing
// library. Without one (EngineConfig.Tracer nil) nothing is traced and
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

// noSpan is the span of an engine without a tracer.
type noSpan struct{}

func (noSpan) ModelReply(ModelResponse, string, string) {}
func (noSpan) End(error)                                {}

// startSpan opens a span with the engine's tracer, or does nothing.
func (e *Engine) startSpan(ctx context.Context, s SpanStart) (context.Context, Span) {
	if e.cfg.Tracer == nil {
		return ctx, noSpan{}
	}
	return e.cfg.Tracer.Start(ctx, s)
}

// traceParent returns ctx's traceparent, "" without a tracer.
func (e *Engine) traceParent(ctx context.Context) string {
	if e.cfg.Tracer == nil {
		return ""
	}
	return e.cfg.Tracer.TraceParent(ctx)
}

// roundSpans holds the spans of one run of a round: the round's, and the
// step's currently open.
type roundSpans struct {
	e     *Engine
	round Span
	step  Span
	// stepCtx carries the open step span; stepNo is its step number.
	stepCtx context.Context
	stepNo  int
	stepRnd int
}

// startRoundSpan opens the round span of run and records its traceparent
// in the run's state, so the commits of this run persist it.
func (e *Engine) startRoundSpan(ctx context.Context, run *Run) (context.Context, *roundSpans) {
	wf := run.wf
	ctx, span := e.startSpan(ctx, SpanStart{
		Kind: SpanRound, WorkflowID: wf.ID, Mode: wf.Mode, Round: wf.Round, Step: wf.Step,
		Origin: wf.TraceContext.Origin, Previous: wf.TraceContext.Round,
	})
	if tp := e.traceParent(ctx); tp != "" {
		wf.TraceContext.Round = tp
	}
	return ctx, &roundSpans{e: e, round: span}
}

// stepContext returns ctx carrying the span of run's current step,
// opening it (and ending the previous step's) when the step changed.
func (s *roundSpans) stepContext(ctx context.Context, run *Run) context.Context {
	wf := run.wf
	if s.step != nil && s.stepNo == wf.Step && s.stepRnd == wf.Round {
		return s.stepCtx
	}
	s.endStep(nil)
	s.stepCtx, s.step = s.e.startSpan(ctx, SpanStart{
		Kind: SpanStep, WorkflowID: wf.ID, Mode: wf.Mode, Round: wf.Round, Step: wf.Step,
	})
	s.stepNo, s.stepRnd = wf.Step, wf.Round
	return s.stepCtx
}

func (s *roundSpans) endStep(err error) {
	if s.step != nil {
		s.step.End(err)
		s.step, s.stepCtx = nil, nil
	}
}

// end closes the open step span and the round span.
func (s *roundSpans) end(err error) {
	s.endStep(err)
	s.round.End(err)
}

// tracedStore opens a commit span around every Store.Commit.
type tracedStore struct {
	Store
	e *Engine
}

func (s tracedStore) Commit(ctx context.Context, c Commit) (*Workflow, []Message, error) {
	ctx, span := s.e.startSpan(ctx, SpanStart{
		Kind: SpanCommit, WorkflowID: c.Workflow.ID, Mode: c.Workflow.Mode, Round: c.Workflow.Round, Step: c.Workflow.Step,
	})
	wf, msgs, err := s.Store.Commit(ctx, c)
	span.End(err)
	return wf, msgs, err
}

// ClaimRoundLoad forwards to the store, so a traced engine still claims a
// round and reads it in one step where the store can (RoundLoader).
func (s tracedStore) ClaimRoundLoad(ctx context.Context, workflowID, owner string, ttl time.Duration) (RoundClaim, error) {
	return ClaimRoundLoad(ctx, s.Store, workflowID, owner, ttl)
}

// tracedRegistry opens an action span around every Registry.Execute.
type tracedRegistry struct {
	Registry
	e *Engine
}

func (r tracedRegistry) Execute(ctx context.Context, call ActionCall) (ActionResult, error) {
	ctx, span := r.e.startSpan(ctx, SpanStart{
		Kind: SpanAction, WorkflowID: call.WorkflowID, Round: call.Round, Step: call.Step, Action: call.Action,
	})
	res, err := r.Registry.Execute(ctx, call)
	span.End(err)
	return res, err
}
