package react

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/twostep/twostep/jsonstream"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/workflow"
)

// EarlyStage2 turns the early start of Stage 2 on or off (DESIGN §11.2,
// YAML stage2.earlyStart; default on): Stage 2 starts as soon as the
// streamed Stage 1 reply holds actionObjective, action, parametersContext
// and parametersSchema, complete and passing their own checks.
func EarlyStage2(on bool) Option {
	return func(m *Mode) { m.noEarly = !on }
}

// early is one Stage 1 call's early Stage 2: it reads the Stage 1 reply
// as it streams and starts Stage 2 from its head. Never while the step
// would wait for an intent approval (Stage 2 runs after the decision),
// nor when the step needs no Stage 2. Its methods are nil-safe: a nil
// early is a Stage 1 call without one.
type early struct {
	fn  func(string) // stream, bound once
	m   *Mode
	run workflow.Run
	ctx context.Context // the step's

	mu      sync.Mutex // the reader runs on the model's stream goroutine
	reader  jsonstream.Reader
	head    map[string]json.RawMessage
	blocked bool // a "parameters" key came, or the head did not pass: none
	started bool

	sel    workflow.Selection // the head's selection Stage 2 started from
	handle workflow.EarlyStart
	cancel context.CancelFunc
	done   chan struct{} // closed when the Stage 2 call has returned
	out    stage2Attempt
}

// earlyPool keeps the early starts of finished Stage 1 calls, each with
// its Stream bound once: a step allocates neither.
var earlyPool = sync.Pool{New: func() any {
	e := &early{}
	e.fn = e.stream
	return e
}}

// newEarly returns the early Stage 2 of a Stage 1 attempt (any attempt:
// a retried Stage 1 may start one too), nil when it is off. Its Stream
// is fn; release it once take has returned.
func (m *Mode) newEarly(ctx context.Context, run workflow.Run) *early {
	if m.noEarly {
		return nil
	}
	e := earlyPool.Get().(*early)
	e.m, e.run, e.ctx = m, run, ctx // the rest once a piece comes
	return e
}

// release returns e to the pool: take has settled it and joined its
// Stage 2 call, and the Stage 1 call that streamed into it has returned
// (a model never calls Stream after that), so nothing refers to it.
func (e *early) release() {
	if e == nil {
		return
	}
	fn := e.fn
	*e = early{fn: fn}
	earlyPool.Put(e)
}

// stream is the Stage 1 call's Stream.
func (e *early) stream(chunk string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.reader.OnMember == nil {
		e.reader.OnMember, e.head = e.member, map[string]json.RawMessage{}
	}
	e.reader.WriteString(chunk)
}

// member reads a completed top-level member of the Stage 1 reply.
func (e *early) member(key string, raw []byte) {
	switch {
	case e.blocked || e.started:
		return
	case strings.EqualFold(key, "parameters"):
		e.blocked = true
		return
	case !prompts.IsStage1HeadKey(key):
		return
	}
	e.head[key] = json.RawMessage(append([]byte(nil), raw...))
	if len(e.head) == len(prompts.Stage1HeadKeys) {
		e.start()
	}
}

// start starts Stage 2 from the head when it passes its checks and the
// step would run Stage 2 now.
func (e *early) start() {
	reg := e.run.Registry()
	sel, problems := prompts.CheckStage1Head(e.head, reg)
	spec, ok := reg.Action(sel.Action)
	if len(problems) > 0 || !ok || e.m.nothingToFill(reg, sel) {
		e.blocked = true
		return
	}
	verdict, err := e.run.Gate(e.ctx, workflow.Gate{Moment: workflow.MomentIntent, Action: sel.Action, Selection: &sel, Probe: true})
	if verdict.Paused || err != nil {
		e.blocked = true
		return
	}
	ctx, cancel := context.WithCancel(e.ctx)
	e.started, e.sel, e.cancel, e.done = true, sel, cancel, make(chan struct{})
	ask := stage2Ask{sel: sel, spec: spec, attempt: 1, early: &e.handle, verdict: verdict}
	go func() {
		defer close(e.done)
		e.out = e.m.stage2Call(ctx, e.run, ask)
	}()
}

// take settles the early Stage 2 once Stage 1 has ended: it stands when
// Stage 1's reply was accepted (accepted) with the selection sel whose
// four head values are those it started from, and take returns its
// outcome (waiting for the call); otherwise it is cancelled, take waits
// for it to return and reports false.
func (e *early) take(accepted bool, sel workflow.Selection) (stage2Attempt, bool) {
	if e == nil {
		return stage2Attempt{}, false
	}
	end := time.Now()
	e.mu.Lock()
	started := e.started
	e.blocked = true // nothing starts after Stage 1 ended
	e.mu.Unlock()
	if !started {
		return stage2Attempt{}, false
	}
	stands := accepted && sameHead(e.sel, sel)
	if !stands {
		e.cancel()
	}
	e.handle.Settle(!stands, end)
	<-e.done
	e.cancel()
	return e.out, stands
}

// sameHead reports whether a and b carry the same four values Stage 2 is
// rendered from.
func sameHead(a, b workflow.Selection) bool {
	return a.Action == b.Action && a.ActionObjective == b.ActionObjective &&
		a.ParametersContext == b.ParametersContext && reflect.DeepEqual(a.ParametersSchema, b.ParametersSchema)
}

// earlyDone commits a step whose early Stage 2 stands: Stage 1's accepted
// selection leads to next (phase parameterize), and the Stage 2 attempt
// is committed from there as parameterize would (stage2Done), with the
// whole selection (learnings, documents, connection included). A Stage 2
// call that failed leaves the selection persisted, as it would have been
// before a Stage 2 call that fails.
func (m *Mode) earlyDone(ctx context.Context, run workflow.Run, next workflow.Checkpoint, a stage2Attempt) error {
	a.ask.sel = *next.Selection
	if a.err != nil {
		if err := run.Checkpoint(ctx, next); err != nil {
			return err
		}
		return a.err
	}
	return m.stage2Done(ctx, run, &next, a)
}
