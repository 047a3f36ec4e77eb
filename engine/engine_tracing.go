package engine

import (
	"context"

	"github.com/twostep/twostep/workflow"
)

// noSpan is the span of an engine without a tracer.
type noSpan struct{}

func (noSpan) ModelReply(workflow.ModelResponse, string, string) {}
func (noSpan) End(error)                                         {}

// startSpan opens a span with the engine's tracer, or does nothing.
func (e *Engine) startSpan(ctx context.Context, s workflow.SpanStart) (context.Context, workflow.Span) {
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
	round workflow.Span
	step  workflow.Span
	// stepCtx carries the open step span; stepNo is its step number.
	stepCtx context.Context
	stepNo  int
	stepRnd int
}

// startRoundSpan opens the round span of run and records its traceparent
// in the run's state, so the commits of this run persist it.
func (e *Engine) startRoundSpan(ctx context.Context, run *roundRun) (context.Context, *roundSpans) {
	wf := run.wf
	ctx, span := e.startSpan(ctx, workflow.SpanStart{
		Kind: workflow.SpanRound, WorkflowID: wf.ID, Mode: wf.Mode, Round: wf.Round, Step: wf.Step,
		Origin: wf.TraceContext.Origin, Previous: wf.TraceContext.Round,
	})
	if tp := e.traceParent(ctx); tp != "" {
		wf.TraceContext.Round = tp
	}
	return ctx, &roundSpans{e: e, round: span}
}

// stepContext returns ctx carrying the span of run's current step,
// opening it (and ending the previous step's) when the step changed.
func (s *roundSpans) stepContext(ctx context.Context, run *roundRun) context.Context {
	wf := run.wf
	if s.step != nil && s.stepNo == wf.Step && s.stepRnd == wf.Round {
		return s.stepCtx
	}
	s.endStep(nil)
	s.stepCtx, s.step = s.e.startSpan(ctx, workflow.SpanStart{
		Kind: workflow.SpanStep, WorkflowID: wf.ID, Mode: wf.Mode, Round: wf.Round, Step: wf.Step,
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
	workflow.Store
	e *Engine
}

func (s tracedStore) Commit(ctx context.Context, c workflow.Commit) (*workflow.Workflow, []workflow.Message, error) {
	ctx, span := s.e.startSpan(ctx, workflow.SpanStart{
		Kind: workflow.SpanCommit, WorkflowID: c.Workflow.ID, Mode: c.Workflow.Mode, Round: c.Workflow.Round, Step: c.Workflow.Step,
	})
	wf, msgs, err := s.Store.Commit(ctx, c)
	span.End(err)
	return wf, msgs, err
}

// Unwrap returns the traced store (workflow.StoreWrapper): its
// capabilities, such as claiming a round and reading it in one step
// (RoundLoader), are used directly; only Commit opens a span.
func (s tracedStore) Unwrap() workflow.Store { return s.Store }

// tracedRegistry opens an action span around every Registry.Execute.
type tracedRegistry struct {
	workflow.Registry
	e *Engine
}

func (r tracedRegistry) Execute(ctx context.Context, call workflow.ActionCall) (workflow.ActionResult, error) {
	ctx, span := r.e.startSpan(ctx, workflow.SpanStart{
		Kind: workflow.SpanAction, WorkflowID: call.WorkflowID, Round: call.Round, Step: call.Step, Action: call.Action,
	})
	res, err := r.Registry.Execute(ctx, call)
	span.End(err)
	return res, err
}
