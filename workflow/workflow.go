package workflow

import (
	"strings"
	"time"

	"github.com/twostep/twostep/textclip"
)

// Status is where a workflow stands.
type Status string

// The workflow statuses of DESIGN §6.
const (
	StatusRunning          Status = "running"
	StatusAwaitingApproval Status = "awaiting_approval"
	StatusCompleted        Status = "completed"
	StatusFailed           Status = "failed"
	StatusStopped          Status = "stopped"
)

// Terminal reports whether no round is running in this status.
func (s Status) Terminal() bool {
	return s == StatusCompleted || s == StatusFailed || s == StatusStopped
}

// StopReason says why the last round ended; empty while a round runs.
type StopReason string

// The stop reasons of DESIGN §3 and §5.
const (
	StopCompleted       StopReason = "completed"
	StopMaxSteps        StopReason = "max_steps"
	StopFailures        StopReason = "failures"
	StopLLMError        StopReason = "llm_error"
	StopStopped         StopReason = "stopped"
	StopPlanUnavailable StopReason = "plan_unavailable"
	// StopLoop: a step repeated an earlier one (same action, parameters
	// and result) engine.Config.LoopRepeats times in one round.
	StopLoop StopReason = "loop"
)

// ModeName selects how a round is run.
type ModeName string

// The two modes. ModeReact is the default.
const (
	ModeReact      ModeName = "react"
	ModeActionPlan ModeName = "actionplan"
)

// Valid reports whether m names a known mode.
func (m ModeName) Valid() bool { return m == ModeReact || m == ModeActionPlan }

// Stats counts the work a workflow has caused, over all its rounds.
type Stats struct {
	LLMCalls         int `json:"llmCalls"`
	PromptTokens     int `json:"promptTokens"`
	CompletionTokens int `json:"completionTokens"`
	Actions          int `json:"actions"`
	// DiscardedCalls counts the early Stage 2 calls whose reply was not
	// used (DESIGN §11.2); they are counted in llmCalls and the tokens too.
	DiscardedCalls int `json:"discardedCalls,omitempty"`
	// ByStage splits llmCalls and tokens by the stage that made the
	// calls (stage1, stage2, plan, repair, compact, action); the sums over
	// its entries equal the totals above for calls counted since it exists.
	ByStage StageTable `json:"byStage"`
}

// Workflow is one conversation-like job of one user. Its JSON form is the
// stored form; the HTTP layer has its own view without Version and
// Checkpoint.
type Workflow struct {
	ID         string     `json:"id"`
	UserID     string     `json:"userId"`
	Mode       ModeName   `json:"mode"`
	Status     Status     `json:"status"`
	StopReason StopReason `json:"stopReason"`
	Round      int        `json:"round"`
	// Step is the round's current step: the one running, awaiting
	// approval or interrupted (stopped, or failed inside it), or the last
	// one a round that ended ran (maxSteps when it hit the limit). Where
	// the round goes on is Checkpoint.Step: the same step while the round
	// runs, the next one after the failure breaker ended it.
	Step     int `json:"step"`
	MaxSteps int `json:"maxSteps"`
	// Title is the first line of the first prompt (TitleOf), for lists.
	Title     string    `json:"title,omitempty"`
	Error     string    `json:"error"`
	Stats     Stats     `json:"stats"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`

	// Version is incremented by every Store.Commit; a commit names the
	// version it expects and fails with KindConflict when it is stale.
	Version int64 `json:"version"`
	// Checkpoint is the persisted phase of the running step, so a
	// restarted process resumes after the last finished model call.
	Checkpoint *Checkpoint `json:"checkpoint,omitempty"`
	// PendingApproval is the step a round with status awaiting_approval
	// waits on (DESIGN §9.1); nil otherwise.
	PendingApproval *PendingApproval `json:"pendingApproval,omitempty"`
	// TraceContext joins the running round's spans to the trace of the
	// request that started it and links a resumed run to the previous one
	// (DESIGN §9.5); empty without a Tracer.
	TraceContext TraceContext `json:"traceContext,omitzero"`
	// ForkedFrom, on a workflow made by Engine.Fork, names the workflow
	// and the step it was forked from; zero on every other workflow.
	ForkedFrom ForkOrigin `json:"forkedFrom,omitzero"`
	// QueuedRounds wait, in order, for the current round to end (DESIGN
	// §10.3 onBusy): the run that ends the round starts the first one in
	// the same commit. Stop discards them.
	QueuedRounds []QueuedRound `json:"queuedRounds,omitempty"`
	// QueueEdits counts the commits that changed nothing but QueuedRounds
	// (each one increments it and Version by one). A run whose commit
	// meets a newer Version that such edits alone explain takes their
	// queue over and commits again instead of giving the round up.
	QueueEdits int64 `json:"queueEdits,omitempty"`
}

// TitleMaxRunes bounds a workflow's Title.
const TitleMaxRunes = 100

// TitleOf returns a prompt's first non-blank line, trimmed and cut to
// TitleMaxRunes (with "…"), as a workflow's Title.
func TitleOf(prompt string) string {
	for line := range strings.Lines(prompt) {
		if line = textclip.OneLine(line); line != "" {
			return textclip.ClipRunes(line, TitleMaxRunes)
		}
	}
	return ""
}

// Clone returns a deep copy, so a caller can change it without touching a
// value shared with a store or another goroutine.
func (w *Workflow) Clone() *Workflow {
	if w == nil {
		return nil
	}
	c := *w
	c.Checkpoint = w.Checkpoint.Clone()
	c.PendingApproval = w.PendingApproval.Clone()
	c.QueuedRounds = CloneQueue(w.QueuedRounds)
	return &c
}

// WithCheckpoint returns a copy of w with cp as its checkpoint, for the
// run's commit that replaces the checkpoint: the old checkpoint is dropped
// rather than copied and cp is used as it is.
func (w *Workflow) WithCheckpoint(cp *Checkpoint) *Workflow {
	c := *w
	c.Checkpoint = cp
	c.PendingApproval = w.PendingApproval.Clone()
	c.QueuedRounds = CloneQueue(w.QueuedRounds)
	return &c
}

// OwnedBy reports whether the workflow belongs to userID. Callers answer
// another user's workflow exactly like a missing one (ErrNotFound).
func (w *Workflow) OwnedBy(userID string) bool {
	return w != nil && userID != "" && w.UserID == userID
}
