package workflow

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// DefaultApprovalTimeout is how long an approval waits for a decision when
// EngineConfig.ApprovalTimeout is 0 (DESIGN §9.1).
const DefaultApprovalTimeout = 24 * time.Hour

// MessageRejected is the status of the action message of a step whose
// approval was refused (or expired): the action did not run.
const MessageRejected MessageStatus = "rejected"

// ApprovalPolicy decides which calls need a person's approval before they
// run (actions.Approvals implements it from the YAML approvals section).
type ApprovalPolicy interface {
	// NeedsApproval reports whether this call of the action must wait for
	// a decision, and the call's effect.
	NeedsApproval(action string, params map[string]any) (bool, Effect)
}

// PendingApproval is the step a paused round waits on (DESIGN §9.1). It
// names document references and the connection label, never a secret.
type PendingApproval struct {
	ID              string         `json:"id"`
	Round           int            `json:"round"`
	Step            int            `json:"step"`
	Action          string         `json:"action"`
	ActionObjective string         `json:"actionObjective"`
	Parameters      map[string]any `json:"parameters"`
	Documents       []string       `json:"documents"`
	Connection      string         `json:"connection"`
	Effect          Effect         `json:"effect"`
	RequestedAt     time.Time      `json:"requestedAt"`
	ExpiresAt       time.Time      `json:"expiresAt"`
}

// Clone returns a copy whose parameters and documents are its own.
func (p *PendingApproval) Clone() *PendingApproval {
	if p == nil {
		return nil
	}
	c := *p
	c.Parameters = maps.Clone(p.Parameters)
	c.Documents = slices.Clone(p.Documents)
	return &c
}

// ApprovalGrant is an approval decided "approve", kept in the checkpoint of
// the step it covers until the step commits: the step executes with
// Parameters (the approved, possibly edited ones) and does not pause again.
type ApprovalGrant struct {
	ID         string         `json:"id"`
	Parameters map[string]any `json:"parameters"`
}

// Decision is a person's answer to a pending approval.
type Decision struct {
	Approve bool
	// Parameters, on approve, replace the step's parameters (validated
	// against the action's schema and the fields Stage 1 asked for).
	Parameters map[string]any
	// Comment says why; on reject the next Stage 1 sees it.
	Comment string
}

// ApprovalObserver is the optional part of an Observer that counts
// approvals: requested, and decided approved, rejected or expired with the
// time the decision took.
type ApprovalObserver interface {
	ApprovalRequested(action string)
	ApprovalDecided(outcome string, wait time.Duration)
}

// StepApproval is what a mode asks for when a step's call needs approval:
// the call as it would run, and the checkpoint the round continues from
// when the approval is rejected (the step after this one).
type StepApproval struct {
	Action     string
	Objective  string
	Parameters map[string]any
	Documents  []string
	Connection string
	// Next is the checkpoint after the step (nil: a fresh select).
	Next *Checkpoint
}

// Approval returns the grant covering the current step when one was
// decided "approve", and whether the step's call needs an approval at all
// (false when no policy is configured or the policy lets it run).
func (r *Run) Approval(action string, params map[string]any) (grant *ApprovalGrant, needed bool) {
	cp := r.wf.Checkpoint
	if cp != nil && cp.Approval != nil {
		return cp.Approval, true
	}
	if r.e.cfg.Approvals == nil {
		return nil, false
	}
	needed, _ = r.e.cfg.Approvals.NeedsApproval(action, params)
	return nil, needed
}

// Pause commits the round as awaiting approval of the step: status
// awaiting_approval and the pending approval in one commit, the current
// checkpoint kept (with where to go on after a rejection), the step not
// advanced. The run ends after it and its lease is released: no worker
// holds a paused round.
func (r *Run) Pause(ctx context.Context, s StepApproval) error {
	now := r.e.now()
	effect := EffectWrite
	if r.e.cfg.Approvals != nil {
		_, effect = r.e.cfg.Approvals.NeedsApproval(s.Action, s.Parameters)
	}
	next := r.wf.Clone()
	cp := Checkpoint{Phase: PhaseExecute}
	if r.wf.Checkpoint != nil {
		cp = *r.wf.Checkpoint.Clone()
	}
	cp.Step, cp.Approval = r.wf.Step, nil
	cp.AfterReject = s.Next.Clone()
	if cp.AfterReject == nil {
		cp.AfterReject = &Checkpoint{Phase: PhaseSelect}
	}
	cp.AfterReject.Step = r.wf.Step + 1
	next.Checkpoint = &cp
	next.Status = StatusAwaitingApproval
	next.PendingApproval = &PendingApproval{
		ID: NewID(PrefixApproval), Round: r.wf.Round, Step: r.wf.Step, Action: s.Action, ActionObjective: s.Objective,
		Parameters: maps.Clone(s.Parameters), Documents: slices.Clone(s.Documents), Connection: s.Connection,
		Effect: effect, RequestedAt: now, ExpiresAt: now.Add(r.e.approvalTimeout()),
	}
	if next.PendingApproval.Documents == nil {
		next.PendingApproval.Documents = []string{}
	}
	if err := r.commit(ctx, next, nil, nil); err != nil {
		return err
	}
	if o, ok := r.e.observer().(ApprovalObserver); ok {
		o.ApprovalRequested(s.Action)
	}
	r.published()
	return nil
}

func (e *Engine) approvalTimeout() time.Duration {
	if e.cfg.ApprovalTimeout > 0 {
		return e.cfg.ApprovalTimeout
	}
	return DefaultApprovalTimeout
}

// Decide applies a person's decision to the pending approval approvalID
// of userID's workflow id, exactly once: approve makes the round run again
// and the step execute (with the edited parameters, when given); reject
// records the step as rejected, with the comment, and the round goes on.
// Another user's workflow is KindNotFound; no pending approval, another
// approval id or an expired one is KindConflict (an expired one is then
// rejected with comment "expired"); invalid edited parameters are
// KindInvalid, one "path: message" line each, and the approval stays
// pending.
func (e *Engine) Decide(ctx context.Context, userID, id, approvalID string, d Decision) (_ *Workflow, err error) {
	defer Wrap(&err, "Decide(%q)", id)
	wf, err := e.Get(ctx, userID, id)
	if err != nil {
		return nil, err
	}
	p := wf.PendingApproval
	switch {
	case wf.Status != StatusAwaitingApproval || p == nil:
		return nil, Errorf(KindConflict, "workflow %s has no pending approval (status %s): it was decided, stopped or expired", id, wf.Status)
	case p.ID != approvalID:
		return nil, Errorf(KindConflict, "approval %q is not the pending one: it was already decided or replaced", approvalID)
	case !e.now().Before(p.ExpiresAt):
		if _, err := e.expire(ctx, wf); err != nil && KindOf(err) != KindConflict {
			return nil, err
		}
		return nil, Errorf(KindConflict, "approval %s expired at %s and was rejected", approvalID, p.ExpiresAt.Format(time.RFC3339))
	}
	if !d.Approve {
		return e.reject(ctx, wf, "rejected", strings.TrimSpace(d.Comment))
	}
	params := p.Parameters
	if d.Parameters != nil {
		if problems := e.checkEdit(wf, p.Action, d.Parameters); len(problems) > 0 {
			return nil, &Error{Kind: KindInvalid, Message: "the edited parameters are invalid: " + strings.Join(problems, "; "),
				Err: &ParameterProblems{Lines: problems}}
		}
		params = d.Parameters
	}
	next := wf.Clone()
	next.Status, next.PendingApproval, next.UpdatedAt = StatusRunning, nil, e.now()
	next.Checkpoint.Approval = &ApprovalGrant{ID: p.ID, Parameters: maps.Clone(params)}
	next.Checkpoint.AfterReject = nil
	stored, err := e.commitAndSchedule(ctx, next, wf.Version, nil, nil)
	if err != nil {
		return nil, err
	}
	e.approvalDecided("approved", p)
	return stored, nil
}

// ParameterProblems carries the "path: message" lines of invalid edited
// parameters, for a 422 with one error per line.
type ParameterProblems struct{ Lines []string }

func (p *ParameterProblems) Error() string { return strings.Join(p.Lines, "; ") }

// AskedFieldsChecker is implemented by a Mode whose model fills only the
// parameters a step asked for (React's Stage 2). CheckAskedFields returns
// one problem line per key of params outside the fields that may be filled
// for action after asked was asked for (nil: every key is allowed), by
// the very rule the mode applies to its model's reply
// (prompts.CheckAskedFields), which workflow cannot import (DESIGN §2).
type AskedFieldsChecker interface {
	CheckAskedFields(params map[string]any, action ActionSpec, asked []FieldSpec) []string
}

// checkEdit judges a person's edited parameters as the step's own model
// reply is judged (prompts.ParseStage2), with the same lines in the same
// order: forbidden keys, then — for a step whose Stage 1 asked for fields,
// in a mode that is an AskedFieldsChecker — keys outside the fields that
// may be filled, then the action's schema.
func (e *Engine) checkEdit(wf *Workflow, action string, params map[string]any) []string {
	problems := ForbiddenKeyProblems(params)
	if cp := wf.Checkpoint; cp != nil && cp.Selection != nil {
		checker, isChecker := e.modes[wf.Mode].(AskedFieldsChecker)
		if spec, ok := e.registry.Action(action); ok && isChecker {
			for _, line := range checker.CheckAskedFields(params, spec, cp.Selection.ParametersSchema.Fields) {
				problems = append(problems, Clip(line, MaxProblemLine))
			}
		}
	}
	for _, line := range e.registry.ValidateParameters(action, params) {
		problems = append(problems, Clip(line, MaxProblemLine))
	}
	return problems
}

// reject records the pending step as rejected (an action message with
// status rejected whose summary says so and gives the comment), goes on
// from the checkpoint Pause saved for the step after it and makes the
// round run again.
func (e *Engine) reject(ctx context.Context, wf *Workflow, outcome, comment string) (*Workflow, error) {
	p := wf.PendingApproval
	summary := fmt.Sprintf("%s was not run: the approval was %s", p.Action, outcome)
	if outcome == "rejected" {
		summary = fmt.Sprintf("%s was not run: a person rejected it", p.Action)
	}
	if comment != "" {
		summary += "; comment: " + comment
	}
	msg := Message{
		ID: NewID(PrefixMessage), WorkflowID: wf.ID, Round: p.Round, Step: p.Step, Role: RoleAction,
		Text: summary, Action: p.Action, ActionObjective: p.ActionObjective, Parameters: maps.Clone(p.Parameters),
		Status: MessageRejected, Documents: []Document{}, Summary: summary, CreatedAt: e.now(),
	}
	next := wf.Clone()
	upgradeCheckpoint(next)
	after := Checkpoint{Step: wf.Step + 1, Phase: PhaseSelect}
	if cp := next.Checkpoint; cp != nil {
		if cp.AfterReject != nil {
			after = *cp.AfterReject
		}
		after.Failures = cp.Failures
	}
	next.Checkpoint = &after
	next.Step = after.Step
	next.Status, next.PendingApproval, next.UpdatedAt = StatusRunning, nil, e.now()
	stored, err := e.commitAndSchedule(ctx, next, wf.Version, []Message{msg}, nil)
	if err != nil {
		return nil, err
	}
	e.approvalDecided(outcome, p)
	return stored, nil
}

// expire rejects wf's pending approval with comment "expired".
func (e *Engine) expire(ctx context.Context, wf *Workflow) (*Workflow, error) {
	return e.reject(ctx, wf, "expired", "expired")
}

func (e *Engine) approvalDecided(outcome string, p *PendingApproval) {
	if o, ok := e.observer().(ApprovalObserver); ok {
		o.ApprovalDecided(outcome, e.now().Sub(p.RequestedAt))
	}
}
