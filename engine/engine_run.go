package engine

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/twostep/twostep/workflow"
)

// commitTimeout bounds a commit made after the run's context was cancelled:
// a finished phase is still persisted (under the version check) so a
// shutdown never throws away a finished model call.
const commitTimeout = 10 * time.Second

// errRoundLost says a commit found the workflow changed under the run
// (stopped, deleted, or taken over by another instance): the run ends
// without writing anything.
var errRoundLost = errors.New("the round changed under this run")

// modelError marks an error returned by the model, so the engine ends the
// round with stop reason llm_error.
type modelError struct{ err error }

func (m *modelError) Error() string { return "model call failed: " + m.err.Error() }
func (m *modelError) Unwrap() error { return m.err }

var _ workflow.Run = (*roundRun)(nil)

// roundRun is the engine's Run: a mode's handle on the round it runs,
// used by one goroutine at a time (the one running the round).
type roundRun struct {
	e    *Engine
	mode workflow.Mode
	// wf is the last committed state: the store may keep the same value
	// as its own (Commit.Handover), so the run never changes it.
	wf   *workflow.Workflow
	msgs []workflow.Message
	// counted are the model calls made since the last commit, which the
	// next commit adds to the workflow's stats.
	counted []countedCall
	conns   []workflow.Connection
	// fence is the fencing token of the lease the run holds; its commits
	// carry it. lease is that lease as this process knows it: no model
	// call starts once it has ended.
	fence int64
	lease *runLease
	// stepStart is when this process started the current step.
	stepStart time.Time
	// firstCall is when the first model call of the round step callStep
	// started (Trace.StartedAtMs counts from it).
	firstCall time.Time
	callStep  [2]int
	// traces are the traces recorded since the run's last commit: the
	// next commit stores them with the phase they belong to (no store
	// write of their own), and flushTraces stores those a run ending
	// without one leaves.
	traces []workflow.Trace
	// detached is context.WithoutCancel(detachedOf), the parent of the
	// store writes' contexts, kept while the run commits with the same
	// context (one allocation per run instead of one per store write).
	detachedOf, detached context.Context
	// loops indexes the round's action messages for loop detection.
	loops workflow.LoopIndex
	// intr is the interrupt request of a round queued to replace this
	// one (nil: none can come); ended is the round the last commit ended
	// when it started a queued one, for published.
	intr  *interruptSignal
	ended *workflow.Workflow
}

// countedCall is a model call counted into the stats by the next commit.
type countedCall struct {
	stage                                        workflow.Stage
	promptTokens, completionTokens, cachedTokens int
	discarded                                    bool // an early Stage 2 call not used
}

// detach returns context.WithoutCancel(ctx), the one made for the last
// context when ctx is that context.
func (r *roundRun) detach(ctx context.Context) context.Context {
	// Contexts are compared only when their type is comparable (two
	// values of the same uncomparable type would panic).
	if r.detached != nil && reflect.TypeOf(ctx).Comparable() && ctx == r.detachedOf {
		return r.detached
	}
	r.detachedOf, r.detached = ctx, context.WithoutCancel(ctx)
	return r.detached
}

// Workflow returns the current state. Read it, never change it, nor
// anything it reaches (use Checkpoint and CommitStep): after a commit the
// store may hold the same value as its own (Commit.Handover).
func (r *roundRun) Workflow() *workflow.Workflow { return r.wf }

// Messages returns every message of the workflow in seq order, including
// those committed by this run. Read-only.
func (r *roundRun) Messages() []workflow.Message { return r.msgs }

// Repeats is Repeats(r.Messages(), r.Workflow().Round), from the run's
// index of the round's action steps instead of a pass over all of them.
func (r *roundRun) Repeats() workflow.StepRepeats {
	newest, earlier, ok := r.loops.Repeats(r.msgs, nil, r.wf.Round)
	return workflow.StepRepeats{Newest: newest, Earlier: earlier, Found: ok}
}

// Fence returns the fencing token of the lease this run holds: strictly
// increasing per workflow, so a service can refuse a request carrying a
// token older than one it has seen.
func (r *roundRun) Fence() int64 { return r.fence }

// Registry returns the action registry as the workflow's user sees it: a
// registry that implements UserScoped shows only the actions that user may
// run (a per-user MCP server's tools are absent for everyone else).
func (r *roundRun) Registry() workflow.Registry {
	return workflow.UserRegistry(r.e.registry, r.wf.UserID)
}

// Connections returns the connections the workflow's user owns (public
// descriptions only), read once per run.
func (r *roundRun) Connections() []workflow.Connection {
	if r.conns == nil {
		r.conns = workflow.UserConnections(r.e.registry, r.wf.UserID)
	}
	return r.conns
}

// DocumentContent returns a document of this workflow with its bytes.
func (r *roundRun) DocumentContent(ctx context.Context, documentID string) (workflow.DocumentContent, error) {
	return r.e.store.DocumentContent(ctx, r.wf.ID, documentID)
}

// IdempotencyKey returns "{workflowId}:{round}:{step}" for the current step.
func (r *roundRun) IdempotencyKey() string {
	return workflow.StepKey(r.wf.ID, r.wf.Round, r.wf.Step)
}

// Generate makes one model call: it counts it in the workflow's stats,
// runs call.Check on the reply and records a trace with the prompt, the raw
// reply, the parse outcome, tokens and latency (stored with the commit of
// the phase that follows, see RecordTrace). A model error (after the
// adapter's own retries) is returned wrapped so the engine fails the round
// with stop reason llm_error; a cancelled context is returned as is. A
// rejected reply is not an error: Generate returns the response and the
// mode reads the rejection from its own Check. With a Budgeter, the call
// first reserves what it may use (estimateTokens) and is not made when
// the user's budget has no room left (a *BudgetError, which stops the
// round with stop reason budget); the reservation is settled to what the
// call used, and what the reply wrote teaches its stage's output bound.
func (r *roundRun) Generate(ctx context.Context, call workflow.ModelCall) (resp workflow.ModelResponse, err error) {
	if err := r.lease.check(ctx); err != nil {
		// The run is over (its lease ended, or it was stopped or cut):
		// no call is made, so none is traced.
		return workflow.ModelResponse{}, err
	}
	early := call.Early
	if b := r.e.cfg.Budget; b != nil {
		var detached context.Context
		if early != nil {
			detached = context.WithoutCancel(ctx) // it runs beside the run's goroutine
		} else {
			detached = r.detach(ctx)
		}
		reserved, err := b.Reserve(ctx, r.wf.UserID, estimateTokens(call, &r.e.outputs))
		if err != nil {
			return workflow.ModelResponse{}, err // no call is made
		}
		defer func() {
			b.Settle(detached, reserved, workflow.ModelUsage{Model: resp.Model, PromptTokens: resp.PromptTokens,
				CachedTokens: resp.CachedTokens, OutputTokens: resp.CompletionTokens})
		}()
	}
	start := time.Now()
	startedAt := r.callStarted(start, early == nil)
	ctx, span := r.e.startSpan(ctx, workflow.SpanStart{
		Kind: workflow.SpanModelCall, WorkflowID: r.wf.ID, Mode: r.wf.Mode, Round: r.wf.Round, Step: r.wf.Step,
		Stage: call.Stage, Attempt: call.Attempt, Prompt: call.Prompt, MaxTokens: call.MaxTokens, JSON: call.JSON, Early: early != nil,
	})
	callCtx := ctx
	if early == nil { // an early call ends when the Stage 1 call it overlaps ends
		callCtx = r.intr.begin(ctx)
	}
	req := call.Request()
	deltas := r.deltasOf(call)
	req.Stream = deltas.stream(call.Stream)
	if req.Stream == nil && (call.Stage == workflow.StageOne || call.Stage == workflow.StageTwo) {
		req.Stream = ignorePiece // stage calls stream (DESIGN §11.2): usage and finish from the stream
	}
	if early != nil {
		early.WhenSettled(func(discarded bool, _ time.Time) { deltas.settle(discarded) })
	}
	resp, err = r.e.model.Generate(callCtx, req)
	interrupted := early == nil && err != nil && ctx.Err() == nil && errors.Is(context.Cause(callCtx), errInterrupted)
	if early == nil {
		r.intr.end()
	}
	end := time.Now()
	t := r.callTrace(call, resp, start, end)
	t.StartedAtMs = startedAt
	if err == nil {
		r.e.outputs.learn(call.Stage, resp.CompletionTokens)
	}
	outcome, err := checkReply(ctx, call, resp, err, interrupted, &t)
	if early == nil {
		r.record(call.Stage, outcome, resp, t, span, err)
		return resp, err
	}
	r.recordWhenSettled(early, call.Stage, outcome, resp, t, span, err, start, end)
	return resp, err
}

// recordWhenSettled records an early call once the mode settles it, which
// may be before or after its Generate returns (workflow.EarlyStart).
func (r *roundRun) recordWhenSettled(early *workflow.EarlyStart, stage workflow.Stage, outcome string, resp workflow.ModelResponse,
	t workflow.Trace, span workflow.Span, err error, start, end time.Time) {
	early.WhenSettled(func(discarded bool, stage1End time.Time) {
		t.OverlapMs = overlapMs(start, end, stage1End)
		if t.Discarded = discarded; discarded {
			outcome, err = "discarded", nil // cancelled or unused on purpose: not a failure
		}
		r.record(stage, outcome, resp, t, span, err)
	})
}

// record counts, observes and traces a finished call, and ends its span.
func (r *roundRun) record(stage workflow.Stage, outcome string, resp workflow.ModelResponse, t workflow.Trace, span workflow.Span, err error) {
	r.counted = append(r.counted, countedCall{stage, resp.PromptTokens, resp.CompletionTokens, resp.CachedTokens, t.Discarded})
	r.e.observer().ModelCalled(stage, outcome, resp.PromptTokens, resp.CompletionTokens)
	span.ModelReply(resp, outcome, t.Error)
	span.End(err)
	r.RecordTrace(t)
}

// callTrace is the trace of a call that ran from start to end.
func (r *roundRun) callTrace(call workflow.ModelCall, resp workflow.ModelResponse, start, end time.Time) workflow.Trace {
	mode := resp.OutputMode
	if mode == "" {
		mode = workflow.OutputText
	}
	return workflow.Trace{
		ID: workflow.NewIDAt(workflow.PrefixTrace, end), WorkflowID: r.wf.ID, Round: r.wf.Round, Step: r.wf.Step,
		Stage: call.Stage, Attempt: call.Attempt, Template: call.Template, Inputs: call.Inputs, Prompt: call.Prompt,
		Response: resp.Text, Model: resp.Model, PromptTokens: resp.PromptTokens,
		CompletionTokens: resp.CompletionTokens, CachedTokens: resp.CachedTokens, CacheWriteTokens: resp.CacheWriteTokens,
		LatencyMs: end.Sub(start).Milliseconds(), FinishReason: resp.StopReason, Retries: resp.Retries, OutputMode: mode, CreatedAt: r.e.now(),
	}
}

// checkReply classifies a call's outcome into t ("ok", "cancelled",
// "error" or "rejected", running call.Check on a reply) and returns the
// error Generate returns.
func checkReply(ctx context.Context, call workflow.ModelCall, resp workflow.ModelResponse, err error, interrupted bool, t *workflow.Trace) (string, error) {
	switch {
	case err != nil && ctx.Err() != nil:
		t.Error = "cancelled: " + context.Cause(ctx).Error()
		return "cancelled", ctx.Err()
	case interrupted:
		t.Error = "cancelled: " + errInterrupted.Error()
		return "cancelled", errInterrupted
	case err != nil:
		t.Error = err.Error()
		return "error", &modelError{err: err}
	case call.Check != nil && resp.Truncated:
		t.Error = workflow.TruncatedProblem(resp)
		return "rejected", nil
	case call.Check != nil:
		reply := resp.Text
		if call.FromNative != nil && t.OutputMode.Native() {
			reply = call.FromNative(reply)
		}
		t.Parsed, t.Error = call.Check(reply)
		if call.Ungrounded != nil {
			t.Ungrounded = call.Ungrounded()
		}
		if t.Error != "" {
			return "rejected", nil
		}
	}
	return "ok", nil
}

// guardActionModel is the run's workflow.ModelGuard for its actions' model
// calls: each reserves what it may use in the user's budget, as Generate
// does, and is refused with a *BudgetError when the budget has no room;
// done settles it to what the call used.
func (r *roundRun) guardActionModel(ctx context.Context, req workflow.ModelRequest) (func(workflow.ModelResponse), error) {
	b := r.e.cfg.Budget
	call := workflow.ModelCall{Stage: req.Stage, Prompt: req.Messages, MaxTokens: req.MaxTokens}
	reserved, err := b.Reserve(ctx, r.wf.UserID, estimateTokens(call, &r.e.outputs))
	if err != nil {
		return nil, err
	}
	return func(resp workflow.ModelResponse) {
		b.Settle(r.detach(ctx), reserved, workflow.ModelUsage{Model: resp.Model, PromptTokens: resp.PromptTokens,
			CachedTokens: resp.CachedTokens, OutputTokens: resp.CompletionTokens})
		r.e.outputs.learn(req.Stage, resp.CompletionTokens)
	}, nil
}

// RecordActionCalls traces and counts the model calls an action made
// (ActionResult.ModelCalls), as Generate does for a mode's own calls: each
// is added to the workflow's stats (llmCalls and tokens), reported to the
// Observer with stage action (outcome "ok", "error", or "cancelled" when a
// failed call's ctx is done), and stored as a trace of stage action for the
// current round and step, attempts numbered from 1 in call order.
//
// The calls are counted into the stats by the next commit (Checkpoint,
// CommitStep or any other): call it just before committing the step whose
// action made the calls, so they are counted in the same atomic commit as
// its action message — a crash before that commit re-runs the step and its
// calls are counted once.
func (r *roundRun) RecordActionCalls(ctx context.Context, calls []workflow.ActionModelCall) {
	for i, c := range calls {
		// The budget counted the call already (guardActionModel).
		r.counted = append(r.counted, countedCall{workflow.StageAction, c.PromptTokens, c.CompletionTokens, c.CachedTokens, false})
		outcome := "ok"
		switch {
		case c.Error != "" && ctx.Err() != nil:
			outcome = "cancelled"
		case c.Error != "":
			outcome = "error"
		}
		r.e.observer().ModelCalled(workflow.StageAction, outcome, c.PromptTokens, c.CompletionTokens)
		r.RecordTrace(workflow.Trace{
			Round: r.wf.Round, Step: r.wf.Step, Stage: workflow.StageAction, Attempt: i + 1, Template: c.Template,
			Prompt: c.Prompt, Response: c.Response, Error: c.Error, Model: c.Model,
			PromptTokens: c.PromptTokens, CompletionTokens: c.CompletionTokens, CachedTokens: c.CachedTokens,
			CacheWriteTokens: c.CacheWriteTokens, LatencyMs: c.LatencyMs,
			// An action's call asks for prose: no schema, no JSON mode.
			OutputMode: workflow.OutputText,
		})
	}
}

// RecordTrace records a trace of this workflow (e.g. an action's, or a
// plan step dropped by validation). It is stored by the run's next commit
// (Checkpoint, AppendSummary, CommitStep, a pause...) in the same atomic
// write as that phase, so a step's traces cost no store round trip of
// their own; when the run ends without one (a cancelled or failed call, a
// workflow changed elsewhere, a store outage) the run stores them on their
// own as it ends. A trace is thus stored with the phase its call led to: a
// process killed before that commit loses both, and the resumed run
// repeats the call and traces it. A failure to store a trace is logged,
// never fatal (traces are diagnostics): a commit the store refuses as
// invalid is made again without its traces.
func (r *roundRun) RecordTrace(t workflow.Trace) {
	if t.ID == "" {
		t.ID = workflow.NewID(workflow.PrefixTrace)
	}
	t.WorkflowID = r.wf.ID
	if t.CreatedAt.IsZero() {
		t.CreatedAt = r.e.now()
	}
	r.traces = append(r.traces, t)
}

// flushTraces stores the traces no commit took, one by one, each retried
// while the store is unavailable (see retryStore). A trace the store
// already has (a commit that was applied though its reply was lost) counts
// as stored.
func (r *roundRun) flushTraces(ctx context.Context) {
	for _, t := range r.traces {
		err := r.e.retryStore(ctx, r.detach(ctx), "trace", r.wf.ID, func(ctx context.Context) error { return r.e.store.AppendTrace(ctx, t) })
		if err != nil && workflow.KindOf(err) != workflow.KindConflict {
			r.e.log.Warn().Str("workflow", r.wf.ID).Str("stage", string(t.Stage)).AnErr("err", err).Msg("storing trace failed")
		}
	}
	r.traces = nil
}

// Checkpoint persists the next phase of the current step (with the stats
// gathered so far), so a restarted engine resumes from it. The engine keeps
// the step and the failure count; cp's own Step and Failures are ignored.
// cp and what it reaches (its selection, slices and maps) are handed over
// with the commit (Commit.Handover): the mode must not change them, nor
// reuse their memory, afterwards.
func (r *roundRun) Checkpoint(ctx context.Context, cp workflow.Checkpoint) error {
	cp.Step = r.wf.Step
	if r.wf.Checkpoint != nil {
		cp.Failures = r.wf.Checkpoint.Failures
	}
	next := r.wf.WithCheckpoint(&cp)
	if err := r.commit(ctx, next, nil, nil); err != nil {
		return err
	}
	r.published()
	return nil
}

// AppendSummary commits msg, the summary a history compaction wrote (role
// RoleSummary), with the run's state — the stats of the compaction call —
// and its checkpoint unchanged: one persisted transition of the current
// step, which then goes on from the same phase. Until it is committed the
// compaction has not happened, so a crash before it repeats the
// compaction call and nothing else.
func (r *roundRun) AppendSummary(ctx context.Context, msg workflow.Message) error {
	if msg.Role != workflow.RoleSummary || msg.ID == "" {
		return workflow.Errorf(workflow.KindInternal, "AppendSummary: a summary message with an id is required, got role %q", msg.Role)
	}
	if err := r.commit(ctx, r.wf.Clone(), []workflow.Message{msg}, nil); err != nil {
		return err
	}
	r.published()
	return nil
}

// CommitStep ends the current step: it commits the step's messages and
// documents atomically with the new state, after applying the round-ending
// rules (End, the failure breaker, maxSteps — see settle). After it the
// round either continues with the next step or has ended.
func (r *roundRun) CommitStep(ctx context.Context, res workflow.StepResult) error {
	failures := 0
	if r.wf.Checkpoint != nil {
		failures = r.wf.Checkpoint.Failures
	}
	if res.Failed {
		failures++
	} else {
		failures = 0
	}
	cp := workflow.Checkpoint{Phase: workflow.PhaseSelect}
	if res.Next != nil {
		// A shallow copy: its slices and maps go to the store with the
		// commit, which may keep them (Commit.Handover).
		cp = *res.Next
	}
	cp.Step, cp.Failures = r.wf.Step+1, failures
	next := r.wf.WithCheckpoint(&cp)
	if res.Executed {
		next.Stats.Actions++
	}
	msgs := append([]workflow.Message(nil), res.Messages...)
	msgs = append(msgs, r.settle(next, res.End, msgs)...)
	if err := r.commit(ctx, next, msgs, res.Documents); err != nil {
		return err
	}
	status := workflow.MessageSuccess
	if res.Failed {
		status = workflow.MessageError
	}
	now := time.Now()
	r.e.observer().StepFinished(r.wf.Mode, res.Action, status, now.Sub(r.stepStart))
	r.stepStart = now
	r.published()
	return nil
}

// commit stores next with msgs, docs and the traces recorded since the
// last commit under the version check, the model calls counted since then
// added to next's stats (next is new for each call: built from r.wf,
// never r.wf itself); the caller then calls published.
// While the store is unavailable the commit is retried with the finished
// phase kept in memory (see retryStore). A conflict
// means someone else changed the workflow (a Stop, a Delete, another
// instance): the run must end without writing, so it returns errRoundLost.
func (r *roundRun) commit(ctx context.Context, next *workflow.Workflow, msgs []workflow.Message, docs []workflow.DocumentContent) error {
	return r.commitShaped(ctx, next, msgs, docs, nil)
}

// commitShaped is commit with the state and messages each attempt writes
// given by shape(next, msgs); nil is commit's, which starts the first
// queued round when next ends the round (startQueued). A commit refused because
// requests queued rounds meanwhile (queueEditsOnly) is made again on the
// stored queue, so queueing never costs a run its round; any other
// refusal is errRoundLost.
func (r *roundRun) commitShaped(ctx context.Context, next *workflow.Workflow, msgs []workflow.Message, docs []workflow.DocumentContent, shape func(*workflow.Workflow, []workflow.Message) (*workflow.Workflow, []workflow.Message)) error {
	for _, k := range r.counted {
		next.Stats.CountCall(k.stage, k.promptTokens, k.completionTokens, k.cachedTokens)
		if k.discarded {
			next.Stats.DiscardedCalls++
		}
	}
	next.UpdatedAt = r.e.now()
	for i := range msgs {
		if msgs[i].CreatedAt.IsZero() {
			msgs[i].CreatedAt = next.UpdatedAt
		}
	}
	base, expected := next, r.wf.Version
	for rebases := 0; ; rebases++ {
		var final *workflow.Workflow
		var fmsgs []workflow.Message
		if shape != nil {
			final, fmsgs = shape(base, msgs)
		} else {
			final, fmsgs = r.e.startQueued(base, msgs)
		}
		var ended *workflow.Workflow
		if final.Round != base.Round {
			ended = base
		}
		err := r.commitOnce(ctx, final, expected, fmsgs, docs, ended)
		if !errors.Is(err, errRoundLost) || rebases >= maxRebases {
			if err == nil && ended != nil {
				r.ended = ended
			}
			return err
		}
		rctx, cancel := context.WithTimeout(r.detach(ctx), commitTimeout)
		stored, gerr := r.e.store.GetWorkflow(rctx, r.wf.ID)
		cancel()
		mine := &workflow.Workflow{Version: expected, QueueEdits: base.QueueEdits, Status: r.wf.Status, Round: r.wf.Round}
		if gerr != nil || !queueEditsOnly(mine, stored) {
			return err
		}
		base = base.Clone()
		base.QueuedRounds, base.QueueEdits = workflow.CloneQueue(stored.QueuedRounds), stored.QueueEdits
		expected = stored.Version
	}
}

// commitOnce stores next at expected version with msgs, docs and the
// traces recorded since the last commit (see commit); ended is the round
// next ends when it starts a queued one (its webhook event), else nil.
func (r *roundRun) commitOnce(ctx context.Context, next *workflow.Workflow, expected int64, msgs []workflow.Message, docs []workflow.DocumentContent, ended *workflow.Workflow) error {
	c := workflow.Commit{
		Workflow: next, ExpectedVersion: expected, Messages: msgs, Documents: docs, Traces: r.traces, Fence: r.fence,
		Handover: true, // next is the run's from here on, and never changed
	}
	var stored *workflow.Workflow
	var saved []workflow.Message
	write := func(ctx context.Context) (err error) {
		stored, saved, err = r.e.commit(ctx, c, ended)
		return err
	}
	err := r.e.retryStore(ctx, r.detach(ctx), "commit", r.wf.ID, write)
	var left []workflow.Trace
	if err != nil && workflow.KindOf(err) == workflow.KindInvalid && len(c.Traces) > 0 {
		// A trace the store cannot take never fails the phase: it is
		// committed alone, the traces left for flushTraces.
		left, c.Traces = c.Traces, nil
		err = r.e.retryStore(ctx, r.detach(ctx), "commit", r.wf.ID, write)
	}
	if err != nil {
		if k := workflow.KindOf(err); k == workflow.KindConflict || k == workflow.KindNotFound {
			return fmt.Errorf("commit of %s at version %d: %w: %w", r.wf.ID, expected, errRoundLost, err)
		}
		return fmt.Errorf("commit of %s: %w", r.wf.ID, err)
	}
	r.wf = stored
	// With "round claimed" and "round interrupted", a run's trail in the
	// log: which instance wrote what under which fence.
	r.e.log.Debug().Str("workflow", stored.ID).Int("round", stored.Round).Int("step", stored.Step).
		Int64("version", stored.Version).Int64("fence", r.fence).Msg("phase committed")
	r.counted = r.counted[:0]
	r.msgs = append(r.msgs, saved...)
	if left == nil {
		// The store keeps copies of what it stores, never the commit's
		// own memory: the next phase's traces reuse the array (one
		// allocation per run instead of one per phase).
		clear(r.traces)
		r.traces = r.traces[:0]
	} else {
		r.traces = left
	}
	return nil
}

// published tells the Observer when the last commit ended the round,
// then publishes the commit: once a watcher hears of it, the hooks have
// run. A round that ends publishes the workflow's messages as the run
// holds them.
func (r *roundRun) published() {
	var ended *workflow.Workflow
	if ended = r.ended; ended != nil {
		// The commit ended the round and started a queued one.
		r.ended = nil
		ended = ended.Clone()
		r.e.observer().RoundEnded(ended)
	}
	if r.wf.Status != workflow.StatusRunning && r.wf.Status != workflow.StatusAwaitingApproval {
		ended = r.wf.Clone()
		r.e.observer().RoundEnded(ended)
	}
	c := workflow.Change{WorkflowID: r.wf.ID}
	if ended != nil {
		c.Ended, c.Messages = ended, r.msgs[:len(r.msgs):len(r.msgs)]
	}
	r.e.changes.Publish(c)
}
