package engine

import (
	"sync"
	"time"

	"github.com/twostep/twostep/jsonstream"
	"github.com/twostep/twostep/workflow"
)

// callStarted returns how long after the start of the current round
// step's first model call a call starting at start starts, in
// milliseconds (Trace.StartedAtMs); first says the call may be that
// first one (an early Stage 2 call never is: its Stage 1 runs).
func (r *roundRun) callStarted(start time.Time, first bool) int64 {
	step := [2]int{r.wf.Round, r.wf.Step}
	if first && (r.callStep != step || r.firstCall.IsZero()) {
		r.callStep, r.firstCall = step, start
	}
	if r.firstCall.IsZero() || r.callStep != step {
		return 0
	}
	return start.Sub(r.firstCall).Milliseconds()
}

// overlapMs is how long a call from start to end ran before Stage 1
// ended at stage1End (Trace.OverlapMs).
func overlapMs(start, end, stage1End time.Time) int64 {
	if stage1End.IsZero() {
		return 0
	}
	if stage1End.Before(end) {
		end = stage1End
	}
	return max(end.Sub(start).Milliseconds(), 0)
}

// The fields whose text is published as deltas while a stage writes it
// (DESIGN §11.3).
const (
	deltaObjective  = "actionObjective"
	deltaMessage    = "message"
	deltaParameters = "parameters"
)

// deltaStream publishes the deltas of one streamed call to Config.Deltas:
// Stage 1's actionObjective, the message of Stage 2's workflow.complete,
// and the raw reply text of every Stage 2 call (field "parameters": the
// parameters object in a native mode, the whole reply object otherwise,
// for a client that shows a tool call's arguments as they stream). An
// early Stage 2 call's deltas are held until the mode settles it, and
// dropped when it is discarded. Nil publishes nothing.
type deltaStream struct {
	out    workflow.Deltas
	base   workflow.Delta
	reader *jsonstream.Reader
	field  string // the decoded field published, "" when none

	mu   sync.Mutex
	hold bool // an early call not settled yet
	drop bool // an early call discarded
	held []workflow.Delta
}

// deltasOf returns the delta stream of call, nil when nobody watches.
func (r *roundRun) deltasOf(call workflow.ModelCall) *deltaStream {
	if r.e.cfg.Deltas == nil || (call.Stage != workflow.StageOne && call.Stage != workflow.StageTwo) {
		return nil
	}
	d := &deltaStream{out: r.e.cfg.Deltas, hold: call.Early != nil, base: workflow.Delta{
		WorkflowID: r.wf.ID, UserID: r.wf.UserID, Round: r.wf.Round, Step: r.wf.Step, Stage: call.Stage}}
	switch {
	case call.Stage == workflow.StageOne:
		d.field = deltaObjective
	case call.Facts.Selection != nil && call.Facts.Selection.Action == workflow.CompleteAction:
		d.field = deltaMessage
	}
	if d.field != "" {
		d.reader = &jsonstream.Reader{OnString: d.onString}
	}
	return d
}

// onString publishes a decoded piece of the watched field: at the top
// level, or inside Stage 2's "parameters" object in text modes.
func (d *deltaStream) onString(path, piece string) {
	if path == d.field || (d.field == deltaMessage && path == "parameters.message") {
		d.publish(d.field, piece)
	}
}

// stream returns the Stream of the call's request: next (the mode's,
// may be nil) and the deltas; nil when neither wants the pieces.
func (d *deltaStream) stream(next func(string)) func(string) {
	if d == nil {
		return next
	}
	return func(chunk string) {
		if next != nil {
			next(chunk)
		}
		if d.base.Stage == workflow.StageTwo {
			d.publish(deltaParameters, chunk)
		}
		if d.reader != nil {
			d.reader.WriteString(chunk)
		}
	}
}

// publish hands a delta over, or holds it while an early call is not
// settled.
func (d *deltaStream) publish(field, text string) {
	delta := d.base
	delta.Field, delta.Text = field, text
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case d.drop:
	case d.hold:
		d.held = append(d.held, delta)
	default:
		d.out.PublishDelta(delta)
	}
}

// settle releases the deltas an early call held, or drops them (and
// every later one) when it was discarded.
func (d *deltaStream) settle(discarded bool) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.hold, d.drop = false, discarded
	if !discarded {
		for _, delta := range d.held {
			d.out.PublishDelta(delta)
		}
	}
	d.held = nil
}

// ignorePiece is the Stream of a stage call nobody reads the pieces of:
// the call still streams, as every stage call does.
func ignorePiece(string) {}
