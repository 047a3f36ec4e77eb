package engine

import (
	"context"
	"errors"
	"sync"

	"github.com/twostep/twostep/templates/notices"
	"github.com/twostep/twostep/workflow"
)

// StopInterrupted is the stop reason of a round ended by an interrupting
// round (onBusy=interrupt). The workflow itself never shows it: the new
// round starts in the same commit. The Observer and the round's closing
// message see it.
const StopInterrupted workflow.StopReason = "interrupted"

// errInterrupted cancels a model call in flight when an interrupting
// round waits: the call is abandoned (nothing of it was committed) and the
// round ends at this safe point.
var errInterrupted = errors.New("round interrupted by a new round")

// maxRebases bounds how often one commit of a run takes over the queue
// edits that raced it before it gives the round up.
const maxRebases = 16

// queueRound handles a new round of a workflow whose round is still
// running or awaiting approval, as onBusy says: KindConflict for reject;
// otherwise the round is queued (its documents stored now) in a commit
// that changes nothing else, and an interrupting round asks the running
// run to end at its next safe point. An interrupting round of a paused
// round ends it at once (its approval cancelled) and starts. wf is the
// workflow as read; KindConflict from the commit means it changed
// meanwhile.
func (e *Engine) queueRound(ctx context.Context, wf *workflow.Workflow, in NewRound) (*workflow.Workflow, error) {
	switch in.OnBusy {
	case "", workflow.OnBusyReject:
		return nil, workflow.Errorf(workflow.KindConflict, "workflow %s has a round %s; wait for it to end, stop it, or send onBusy=enqueue or interrupt", wf.ID, wf.Status)
	}
	if len(wf.QueuedRounds) >= workflow.MaxQueuedRounds {
		return nil, workflow.Errorf(workflow.KindTooMany, "workflow %s has %d queued rounds already, the most it may have", wf.ID, workflow.MaxQueuedRounds)
	}
	if n, err := e.queuedOf(ctx, wf.UserID); err != nil {
		return nil, err
	} else if n >= e.cfg.MaxQueuedPerUser {
		return nil, workflow.Errorf(workflow.KindTooMany, "you have %d queued rounds across your workflows, the most a user may have (limits.maxQueuedPerUser); wait for some to run, or stop a workflow to discard its queue", n)
	}
	msg, docs, err := e.userMessage(wf, wf.Round+1, in.Prompt, in.Documents)
	if err != nil {
		return nil, err
	}
	q := workflow.QueuedRound{MessageID: msg.ID, Prompt: msg.Text, Documents: msg.Documents, Interrupt: in.OnBusy == workflow.OnBusyInterrupt, QueuedAt: e.now()}
	if len(q.Documents) == 0 {
		q.Documents = nil
	}
	if q.Interrupt && wf.Status == workflow.StatusAwaitingApproval {
		ended := wf.Clone()
		workflow.InsertQueued(ended, q)
		ended.PendingApproval = nil
		next, msgs := e.interrupted(ended, nil)
		stored, err := e.commitAndSchedule(ctx, next, wf.Version, msgs, docs)
		if err == nil {
			e.roundEnded(ended.Clone(), nil)
		}
		return stored, err
	}
	next := wf.Clone()
	workflow.InsertQueued(next, q)
	next.QueueEdits++
	next.UpdatedAt = e.now()
	stored, _, err := e.store.Commit(ctx, workflow.Commit{Workflow: next, ExpectedVersion: wf.Version, Documents: docs})
	if err != nil {
		return nil, err
	}
	e.notify(stored.ID)
	if q.Interrupt {
		e.runner.interrupt(stored.ID)
	}
	return stored, nil
}

// interrupted returns ended — the round's state, its queue's head an
// interrupting round — as a round ended by that round, with its closing
// message, chained into the next round (startQueued).
func (e *Engine) interrupted(ended *workflow.Workflow, msgs []workflow.Message) (*workflow.Workflow, []workflow.Message) {
	ended.Status, ended.StopReason, ended.Error = workflow.StatusStopped, StopInterrupted, ""
	if ended.Checkpoint != nil {
		ended.Checkpoint.AfterReject = nil
	}
	closing := workflow.Message{
		ID: workflow.NewID(workflow.PrefixMessage), WorkflowID: ended.ID, Role: workflow.RoleAssistant, Round: ended.Round, Step: ended.Step,
		Text:      notices.Interrupted(ended.Round, ended.Step),
		Documents: []workflow.Document{}, CreatedAt: e.now(),
	}
	return e.startQueued(ended, append(msgs[:len(msgs):len(msgs)], closing))
}

// startQueued returns, when ended's round has ended (a terminal status)
// and a round is queued, a copy of ended that starts the first queued
// round, and msgs with its user message appended; else ended and msgs as
// they are. The run (or request) that ends a round commits this, so a
// queued round starts in the same atomic commit as the end of the one
// before: none is lost, whichever instance dies.
func (e *Engine) startQueued(ended *workflow.Workflow, msgs []workflow.Message) (*workflow.Workflow, []workflow.Message) {
	if !ended.Status.Terminal() || len(ended.QueuedRounds) == 0 {
		return ended, msgs
	}
	q := ended.QueuedRounds[0]
	next := ended.Clone()
	next.QueuedRounds = workflow.CloneQueue(ended.QueuedRounds[1:])
	round := ended.Round + 1
	startRound(next, round)
	next.PendingApproval = nil
	msg := workflow.Message{
		ID: q.MessageID, WorkflowID: ended.ID, Round: round, Role: workflow.RoleUser, Text: q.Prompt,
		Documents: append([]workflow.Document{}, q.Documents...), CreatedAt: e.now(),
	}
	if len(q.Documents) > 0 {
		msg.DocumentsLabel = workflow.UserLabel(round)
	}
	return next, append(msgs[:len(msgs):len(msgs)], msg)
}

// queueEditsOnly reports whether every commit between the version a run
// last committed (mine) and the stored one changed nothing but the queue:
// then the run may take the stored queue over and commit again.
func queueEditsOnly(mine, stored *workflow.Workflow) bool {
	gap := stored.Version - mine.Version
	return gap > 0 && gap == stored.QueueEdits-mine.QueueEdits && stored.Status == mine.Status && stored.Round == mine.Round
}

// interruptSignal carries an interrupting round's request to a run: the
// watcher (a round queued on another instance) or the runner (one queued
// here) sets it; the run checks it between phases, and a model call in
// flight is cancelled with errInterrupted. An action in flight is never
// cancelled by it.
type interruptSignal struct {
	mu        sync.Mutex
	requested bool
	call      context.CancelCauseFunc
}

// request asks the run to end its round at the next safe point.
func (s *interruptSignal) request() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requested = true
	if s.call != nil {
		s.call(errInterrupted)
	}
}

// isRequested reports whether request was called.
func (s *interruptSignal) isRequested() bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requested
}

// begin returns the context of a model call, cancelled with
// errInterrupted when an interrupt is (or was already) requested; end
// ends the call. Calls of one run never overlap.
func (s *interruptSignal) begin(ctx context.Context) context.Context {
	if s == nil {
		return ctx
	}
	cctx, cancel := context.WithCancelCause(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.requested {
		cancel(errInterrupted)
	}
	s.call = cancel
	return cctx
}

// end ends the call begin started, releasing its context.
func (s *interruptSignal) end() {
	if s == nil {
		return
	}
	s.mu.Lock()
	cancel := s.call
	s.call = nil
	s.mu.Unlock()
	if cancel != nil {
		cancel(nil)
	}
}

// clear forgets a request (the run found no interrupting round queued).
func (s *interruptSignal) clear() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requested = false
}

// endInterrupted ends the run's round for the interrupting round at the
// head of its queue: at a safe point (between phases), with a closing
// message, the next round started in the same commit. The queue is the
// stored one (the commit takes over the edits that raced it); when it
// holds no interrupting round after all, the state is committed as it is
// and the round goes on.
func (r *roundRun) endInterrupted(ctx context.Context) error {
	r.intr.clear()
	shape := func(b *workflow.Workflow, msgs []workflow.Message) (*workflow.Workflow, []workflow.Message) {
		if b.Interrupting() {
			return r.e.interrupted(b.Clone(), msgs)
		}
		return b, msgs
	}
	if err := r.commitShaped(ctx, r.wf.Clone(), nil, nil, shape); err != nil {
		return err
	}
	r.published()
	return nil
}

// interruptRequested reports whether an interrupting round waits.
func (r *roundRun) interruptRequested() bool {
	return r.wf.Interrupting() || r.intr.isRequested()
}

// queuedUploads returns the ids of the documents the queued rounds q
// uploaded (stored when each was queued), which discarding them deletes.
func queuedUploads(q []workflow.QueuedRound) []string {
	var ids []string
	for _, r := range q {
		for _, d := range r.Documents {
			ids = append(ids, d.ID)
		}
	}
	return ids
}

// queuedOf counts userID's queued rounds over all their workflows,
// reading their listing page by page.
func (e *Engine) queuedOf(ctx context.Context, userID string) (int, error) {
	return e.tally(ctx, userID, func(w *workflow.Workflow) int { return len(w.QueuedRounds) })
}

// runningOf counts userID's running workflows, reading their listing: a
// check before work the store's own atomic check (Commit.RunningLimit)
// would only refuse after it was done.
func (e *Engine) runningOf(ctx context.Context, userID string) (int, error) {
	return e.tally(ctx, userID, func(w *workflow.Workflow) int {
		if w.Status == workflow.StatusRunning {
			return 1
		}
		return 0
	})
}

// tally sums count over userID's workflows, page by page.
func (e *Engine) tally(ctx context.Context, userID string, count func(*workflow.Workflow) int) (int, error) {
	n, cursor := 0, ""
	for {
		page, next, err := e.store.ListWorkflows(ctx, userID, workflow.Page{Limit: workflow.MaxPageLimit, Cursor: cursor})
		if err != nil {
			return 0, err
		}
		for _, w := range page {
			n += count(w)
		}
		if next == "" {
			return n, nil
		}
		cursor = next
	}
}
