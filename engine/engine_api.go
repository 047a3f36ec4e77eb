package engine

import (
	"context"
	"strings"

	"github.com/twostep/twostep/workflow"
)

// NewWorkflow is a request to create a workflow and start its first round.
type NewWorkflow struct {
	UserID    string
	Prompt    string
	Mode      workflow.ModeName // "" means ModeReact
	MaxSteps  int               // 0 means the engine's default
	Documents []workflow.DocumentContent
	// Webhook, when set, receives the workflow's round events (its URL
	// checked and its secret made by the caller).
	Webhook *workflow.WebhookSubscription
}

// NewRound is a request to start another round of an existing workflow.
type NewRound struct {
	Prompt    string
	Documents []workflow.DocumentContent
	// OnBusy says what happens while a round still runs or awaits
	// approval ("" means OnBusyReject).
	OnBusy workflow.OnBusy
}

// Create validates in (a non-empty prompt and user, a mode this engine
// runs, maxSteps within 1..MaxStepsLimit: else KindInvalid; the user's
// running rounds under MaxRunningPerUser: else KindTooMany), commits the
// workflow with its first user message and documents (label
// round1_user_context) with status running at round 1, schedules the round
// and returns the stored workflow.
func (e *Engine) Create(ctx context.Context, in NewWorkflow) (_ *workflow.Workflow, err error) {
	defer workflow.Wrap(&err, "Create")
	if strings.TrimSpace(in.UserID) == "" {
		return nil, workflow.Errorf(workflow.KindInvalid, "a user is required")
	}
	if err := e.checkBudget(ctx, in.UserID); err != nil {
		return nil, err
	}
	if in.Mode == "" {
		in.Mode = workflow.ModeReact
	}
	if !in.Mode.Valid() || e.modes[in.Mode] == nil {
		return nil, workflow.Errorf(workflow.KindInvalid, "mode %q is not available (want %q or %q)", in.Mode, workflow.ModeReact, workflow.ModeActionPlan)
	}
	if in.MaxSteps == 0 {
		in.MaxSteps = e.cfg.DefaultMaxSteps
	}
	if in.MaxSteps < 1 || in.MaxSteps > e.cfg.MaxStepsLimit {
		return nil, workflow.Errorf(workflow.KindInvalid, "maxSteps must be between 1 and %d, not %d", e.cfg.MaxStepsLimit, in.MaxSteps)
	}
	now := e.now()
	wf := &workflow.Workflow{
		ID: workflow.NewID(workflow.PrefixWorkflow), UserID: in.UserID, Mode: in.Mode, MaxSteps: in.MaxSteps,
		Title: workflow.TitleOf(in.Prompt), CreatedAt: now, UpdatedAt: now,
	}
	msg, docs, err := e.userMessage(wf, 1, in.Prompt, in.Documents)
	if err != nil {
		return nil, err
	}
	startRound(wf, 1)
	wf.TraceContext.Origin = e.traceParent(ctx)
	stored, _, err := e.commit(ctx, workflow.Commit{
		Workflow: wf, Messages: []workflow.Message{msg}, Documents: docs, RunningLimit: e.cfg.MaxRunningPerUser,
		Webhook: in.Webhook,
	}, nil)
	if err != nil {
		return nil, err
	}
	e.notify(stored.ID)
	e.runner.schedule(ctx, stored.ID)
	return stored, nil
}

// StartRound starts the next round of a workflow whose last round ended,
// with a new user message. While a round runs or awaits approval, in.OnBusy
// decides: reject (the default) answers KindConflict; enqueue queues the
// round to start when the rounds before it end; interrupt queues it first
// and ends the running round at its next safe point (DESIGN §10.3). The
// returned workflow shows the queue (QueuedRounds).
func (e *Engine) StartRound(ctx context.Context, userID, id string, in NewRound) (_ *workflow.Workflow, err error) {
	defer workflow.Wrap(&err, "StartRound(%q)", id)
	if !in.OnBusy.Valid() {
		return nil, workflow.Errorf(workflow.KindInvalid, "onBusy must be %q, %q or %q, not %q", workflow.OnBusyReject, workflow.OnBusyEnqueue, workflow.OnBusyInterrupt, in.OnBusy)
	}
	for {
		wf, err := e.Get(ctx, userID, id)
		if err != nil {
			return nil, err
		}
		if err := e.checkBudget(ctx, userID); err != nil {
			return nil, err
		}
		if !wf.Status.Terminal() {
			stored, err := e.queueRound(ctx, wf, in)
			if workflow.KindOf(err) == workflow.KindConflict && in.OnBusy != "" && in.OnBusy != workflow.OnBusyReject {
				continue // the round moved on meanwhile: look again
			}
			return stored, err
		}
		round := wf.Round + 1
		msg, docs, err := e.userMessage(wf, round, in.Prompt, in.Documents)
		if err != nil {
			return nil, err
		}
		next := wf.Clone()
		startRound(next, round)
		next.UpdatedAt = e.now()
		stored, err := e.commitAndSchedule(ctx, next, wf.Version, []workflow.Message{msg}, docs)
		if workflow.KindOf(err) == workflow.KindConflict && in.OnBusy != "" && in.OnBusy != workflow.OnBusyReject {
			continue // a round started meanwhile: queue behind it
		}
		return stored, err
	}
}

// Resume continues a failed or stopped round from its checkpoint, at the
// checkpoint's step (the failure count reset): the step a stop or an error
// interrupted, or the step after the one the failure breaker ended the
// round with; a round without a checkpoint (plan_unavailable) runs its
// step again from the start. KindConflict for any other status.
func (e *Engine) Resume(ctx context.Context, userID, id string) (_ *workflow.Workflow, err error) {
	defer workflow.Wrap(&err, "Resume(%q)", id)
	wf, err := e.Get(ctx, userID, id)
	if err != nil {
		return nil, err
	}
	if wf.Status != workflow.StatusFailed && wf.Status != workflow.StatusStopped {
		return nil, workflow.Errorf(workflow.KindConflict, "only a failed or stopped round can be resumed; workflow %s is %s", id, wf.Status)
	}
	if err := e.checkBudget(ctx, userID); err != nil {
		return nil, err
	}
	next := wf.Clone()
	upgradeCheckpoint(next)
	if next.Checkpoint == nil {
		next.Checkpoint = &workflow.Checkpoint{Step: next.Step, Phase: workflow.PhaseSelect}
	}
	next.Step = next.Checkpoint.Step
	next.Checkpoint.Failures = 0
	next.Status, next.StopReason, next.Error = workflow.StatusRunning, "", ""
	next.UpdatedAt = e.now()
	return e.commitAndSchedule(ctx, next, wf.Version, nil, nil)
}

// Stop ends the running round with status stopped: it commits the status
// (under the version check, so a round that ended meanwhile answers
// KindConflict) and cancels the in-flight model call — at once on this
// instance, within a status poll on another. The checkpoint is kept for
// Resume.
func (e *Engine) Stop(ctx context.Context, userID, id string) (_ *workflow.Workflow, err error) {
	defer workflow.Wrap(&err, "Stop(%q)", id)
	stored, err := e.stop(ctx, userID, id)
	if err != nil {
		return nil, err
	}
	e.runner.stop(id, errStopped)
	e.roundEnded(stored.Clone(), nil)
	return stored, nil
}

func (e *Engine) stop(ctx context.Context, userID, id string) (*workflow.Workflow, error) {
	for {
		wf, err := e.Get(ctx, userID, id)
		if err != nil {
			return nil, err
		}
		if wf.Status != workflow.StatusRunning && wf.Status != workflow.StatusAwaitingApproval {
			return nil, workflow.Errorf(workflow.KindConflict, "workflow %s has no running round (status %s)", id, wf.Status)
		}
		next := wf.Clone()
		next.Status, next.StopReason, next.Error = workflow.StatusStopped, workflow.StopStopped, ""
		// Stopping a paused round cancels its approval; Resume asks again.
		// Stop ends the queued rounds too, and deletes their uploads in
		// the same commit: no message will ever carry them.
		next.PendingApproval = nil
		next.QueuedRounds = nil
		drop := queuedUploads(wf.QueuedRounds)
		if next.Checkpoint != nil {
			next.Checkpoint.AfterReject = nil
		}
		next.UpdatedAt = e.now()
		stored, _, err := e.commit(ctx, workflow.Commit{Workflow: next, ExpectedVersion: wf.Version, DropDocuments: drop}, nil)
		if workflow.KindOf(err) == workflow.KindConflict {
			continue // the round moved on meanwhile: look again
		}
		if err != nil {
			return nil, err
		}
		e.notify(stored.ID)
		return stored, nil
	}
}

// Delete removes the workflow and everything it owns, stopping its running
// round first (and, on this instance, waiting for the run to end).
func (e *Engine) Delete(ctx context.Context, userID, id string) (err error) {
	defer workflow.Wrap(&err, "Delete(%q)", id)
	if _, err := e.stop(ctx, userID, id); err != nil && workflow.KindOf(err) != workflow.KindConflict {
		return err
	}
	if done := e.runner.stop(id, errStopped); done != nil {
		select {
		case <-done:
		case <-ctx.Done():
			return workflow.WrapKind(workflow.KindUnavailable, ctx.Err(), "the round did not stop in time")
		}
	}
	if err := e.store.DeleteWorkflow(ctx, id); err != nil {
		return err
	}
	return e.forgetStanding(ctx, userID, id)
}

// commitAndSchedule commits next, a round made running again, under the
// user's running limit (checked by the store in the same atomic step), and
// schedules it.
func (e *Engine) commitAndSchedule(ctx context.Context, next *workflow.Workflow, version int64, msgs []workflow.Message, docs []workflow.DocumentContent) (*workflow.Workflow, error) {
	next.TraceContext.Origin = e.traceParent(ctx)
	stored, _, err := e.commit(ctx, workflow.Commit{
		Workflow: next, ExpectedVersion: version, Messages: msgs, Documents: docs, RunningLimit: e.cfg.MaxRunningPerUser,
	}, nil)
	if workflow.KindOf(err) == workflow.KindConflict {
		return nil, workflow.WrapKind(workflow.KindConflict, err, "workflow %s changed meanwhile; try again", next.ID)
	}
	if err != nil {
		return nil, err
	}
	e.notify(stored.ID)
	e.runner.schedule(ctx, stored.ID)
	return stored, nil
}

// startRound puts wf at the first step of round.
func startRound(wf *workflow.Workflow, round int) {
	wf.Round, wf.Step = round, 1
	wf.Status, wf.StopReason, wf.Error = workflow.StatusRunning, "", ""
	wf.Checkpoint = &workflow.Checkpoint{Step: 1, Phase: workflow.PhaseSelect}
	wf.TraceContext = workflow.TraceContext{} // a new round links to no earlier run
}

// userMessage builds the user message opening round, with its uploads
// labelled UserLabel(round). It is the one place user messages are made.
func (e *Engine) userMessage(wf *workflow.Workflow, round int, prompt string, uploads []workflow.DocumentContent) (workflow.Message, []workflow.DocumentContent, error) {
	if strings.TrimSpace(prompt) == "" {
		return workflow.Message{}, nil, workflow.Errorf(workflow.KindInvalid, "the prompt must not be empty")
	}
	msg := workflow.Message{
		ID: workflow.NewID(workflow.PrefixMessage), WorkflowID: wf.ID, Round: round, Role: workflow.RoleUser, Text: prompt,
		Documents: []workflow.Document{}, CreatedAt: e.now(),
	}
	docs := make([]workflow.DocumentContent, 0, len(uploads))
	for i, d := range uploads {
		if strings.TrimSpace(d.Name) == "" {
			return workflow.Message{}, nil, workflow.Errorf(workflow.KindInvalid, "document %d has no name", i+1)
		}
		d.ID, d.WorkflowID, d.MessageID = workflow.NewID(workflow.PrefixDocument), wf.ID, msg.ID
		if d.MimeType == "" {
			d.MimeType = "application/octet-stream"
		}
		d.Size = int64(len(d.Content))
		docs = append(docs, d)
		msg.Documents = append(msg.Documents, d.Document)
	}
	if len(docs) > 0 {
		msg.DocumentsLabel = workflow.UserLabel(round)
	}
	return msg, docs, nil
}
