package agui

import (
	"context"
	"fmt"
	"time"

	"github.com/twostep/twostep/httpapi"
	"github.com/twostep/twostep/workflow"
)

// messagesPage is how many messages one read returns.
const messagesPage = 200

// follower follows one run's round and sends it as AG-UI events: the
// committed messages of the round (from the plan's step on) read from the
// store after each commit heard of (and every poll, for commits made on
// other instances), and the deltas of its streaming replies in between.
type follower struct {
	h                 *Handler
	srv               *httpapi.Server
	user              string
	plan              plan
	out               *writer
	threadID, runID   string
	after             int64 // the seq of the last message read
	text, tool, step  *open
	done, answerSteps map[stepKey]bool
}

// stepKey is a (round, step).
type stepKey [2]int

// open is a text message, tool call or step begun and not yet ended.
type open struct {
	key  stepKey
	id   string // message or tool call id; the step's name
	sent string // the text or arguments sent so far
}

// follow sends the round until it ends, pauses, or the client leaves.
func (f *follower) follow(ctx context.Context) error {
	f.done, f.answerSteps = map[stepKey]bool{}, map[stepKey]bool{}
	id := f.plan.workflowID
	changed, stopChanges := f.srv.Changes().Subscribe(id)
	defer stopChanges()
	var deltas <-chan workflow.Delta
	if src := f.srv.Deltas(); src != nil {
		var stop func()
		deltas, stop = src.SubscribeDeltas(id)
		defer stop()
	}
	tick := time.NewTicker(f.srv.Poll())
	defer tick.Stop()
	w, err := f.h.eng.Get(ctx, f.user, id)
	if err != nil {
		return f.failed(err)
	}
	if err := f.snapshot(w); err != nil {
		return err
	}
	for {
		if err := f.drain(ctx, deltas); err != nil {
			return err
		}
		w, err := f.readNew(ctx)
		if err != nil {
			return f.failed(err)
		}
		if f.ended(w) {
			return f.finish(w)
		}
		if err := f.out.heartbeat(f.srv.Heartbeat()); err != nil {
			return err
		}
		if err := f.await(ctx, changed, tick.C, deltas); err != nil {
			return err
		}
	}
}

// await sends the deltas that arrive until a commit is heard of or the
// poll ticks; an error ends the run's stream.
func (f *follower) await(ctx context.Context, changed <-chan workflow.Change, tick <-chan time.Time, deltas <-chan workflow.Delta) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-f.srv.Closing():
			return f.out.send(Event{Type: RunError, Code: "shutdown", Message: "the gateway is shutting down; the round goes on: run the thread again to follow it"})
		case <-changed:
			return nil
		case <-tick:
			return nil
		case d := <-deltas:
			if err := f.delta(ctx, d); err != nil {
				return err
			}
		}
	}
}

// drain sends the deltas already waiting, so they precede the commit
// that follows them.
func (f *follower) drain(ctx context.Context, deltas <-chan workflow.Delta) error {
	for {
		select {
		case d := <-deltas:
			if err := f.delta(ctx, d); err != nil {
				return err
			}
		default:
			return nil
		}
	}
}

// readNew sends the messages committed since the last read and returns
// the workflow as read before them (so a terminal status read comes with
// every message committed with it).
func (f *follower) readNew(ctx context.Context) (*workflow.Workflow, error) {
	var first *workflow.Workflow
	for {
		w, msgs, err := f.h.eng.Messages(ctx, f.user, f.plan.workflowID, f.after, messagesPage)
		if err != nil {
			return nil, err
		}
		if first == nil {
			first = w
		}
		for _, m := range msgs {
			f.after = m.Seq
			if m.Round != f.plan.round || m.Step < f.plan.fromStep {
				continue
			}
			if err := f.message(m); err != nil {
				return nil, err
			}
		}
		if len(msgs) < messagesPage {
			return first, nil
		}
	}
}

// ended reports whether the run's round is over or paused.
func (f *follower) ended(w *workflow.Workflow) bool {
	return w.Round > f.plan.round || (w.Round == f.plan.round && w.Status != workflow.StatusRunning)
}

// failed ends the stream for a read that failed.
func (f *follower) failed(err error) error {
	if err := f.closeAll(); err != nil {
		return err
	}
	if workflow.KindOf(err) == workflow.KindNotFound {
		return f.out.send(Event{Type: RunError, Code: "deleted", Message: "the thread's workflow was deleted"})
	}
	return f.out.send(Event{Type: RunError, Code: "unavailable", Message: workflow.PublicMessage(err)})
}

// finish closes what is open and ends the run as the workflow says.
func (f *follower) finish(w *workflow.Workflow) error {
	if w.Round == f.plan.round && w.Status == workflow.StatusAwaitingApproval && w.PendingApproval != nil {
		return f.interrupt(w)
	}
	if err := f.closeAll(); err != nil {
		return err
	}
	if err := f.snapshot(w); err != nil {
		return err
	}
	if w.Round == f.plan.round {
		switch w.Status {
		case workflow.StatusFailed:
			msg := w.Error
			if msg == "" {
				msg = "the round failed"
			}
			return f.out.send(Event{Type: RunError, Code: "round_failed", Message: msg})
		case workflow.StatusStopped:
			return f.out.send(Event{Type: RunError, Code: "stopped", Message: "the round was stopped (" + string(w.StopReason) + ")"})
		}
	}
	return f.out.send(Event{Type: RunFinished, ThreadID: f.threadID, RunID: f.runID, Result: snapshotOf(w), Outcome: &Outcome{Type: "success"}})
}

// snapshot sends where the workflow stands.
func (f *follower) snapshot(w *workflow.Workflow) error {
	return f.out.send(Event{Type: StateSnapshot, Snapshot: snapshotOf(w)})
}

func snapshotOf(w *workflow.Workflow) *Snapshot {
	return &Snapshot{WorkflowID: w.ID, Status: string(w.Status), Round: w.Round, Step: w.Step, StopReason: string(w.StopReason)}
}

// callID is the tool call id of a round step's action, the same in every
// run (an interrupted call's result arrives in the resumed run).
func (f *follower) callID(k stepKey) string {
	return fmt.Sprintf("call_%s_%d_%d", f.plan.workflowID, k[0], k[1])
}

// answerID is the message id of an answer sent while it streams.
func (f *follower) answerID(k stepKey) string {
	return fmt.Sprintf("answer_%s_%d_%d", f.plan.workflowID, k[0], k[1])
}
