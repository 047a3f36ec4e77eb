package workflow

import "context"

// Run is a mode's handle on the round it runs, given by the engine to
// Mode.Step and Mode.Closing. It is used by one goroutine at a time (the
// one running the round) and exposes the workflow, its messages, the
// registry, a traced model call, the approval gate and the persisted
// transitions of a step: Checkpoint, AppendSummary, CommitStep.
type Run interface {
	// Workflow returns the current state. Read it, never change it, nor
	// anything it reaches (use Checkpoint and CommitStep): after a commit
	// the store may hold the same value as its own (Commit.Handover).
	Workflow() *Workflow
	// Messages returns every message of the workflow in seq order,
	// including those committed by this run. Read-only.
	Messages() []Message
	// Repeats is Repeats(Messages(), Workflow().Round), from the run's
	// index of the round's action steps.
	Repeats() StepRepeats
	// Fence returns the fencing token of the lease this run holds:
	// strictly increasing per workflow.
	Fence() int64
	// Registry returns the action registry as the workflow's user sees it
	// (see UserScoped).
	Registry() Registry
	// Connections returns the connections the workflow's user owns
	// (public descriptions only).
	Connections() []Connection
	// DocumentContent returns a document of this workflow with its bytes.
	DocumentContent(ctx context.Context, documentID string) (DocumentContent, error)
	// IdempotencyKey returns "{workflowId}:{round}:{step}" for the current
	// step.
	IdempotencyKey() string
	// Generate makes one model call and traces it. A rejected reply is not
	// an error; its errors must be returned by Step unchanged. A call that
	// could pass the user's budget is not made (a *BudgetError).
	Generate(ctx context.Context, call ModelCall) (ModelResponse, error)
	// PlannedOutput returns the output mode the engine's model plans for
	// call (see PlannedOutput).
	PlannedOutput(call ModelCall) OutputMode
	// RecordActionCalls traces the model calls an action made and counts
	// them into the stats of the next commit.
	RecordActionCalls(ctx context.Context, calls []ActionModelCall)
	// RecordTrace keeps t to be stored with the next commit.
	RecordTrace(t Trace)
	// Checkpoint persists the next phase of the current step. cp and what
	// it reaches are handed over with the commit: not to be changed
	// afterwards.
	Checkpoint(ctx context.Context, cp Checkpoint) error
	// AppendSummary commits a history compaction's summary message; the
	// step goes on from the same phase.
	AppendSummary(ctx context.Context, msg Message) error
	// CommitStep ends the current step: its messages and documents are
	// committed atomically with the new state after the round-ending
	// rules.
	CommitStep(ctx context.Context, res StepResult) error
	// Gate is the approval gate, the one place a step learns whether it
	// waits for a person (DESIGN §9.1, §10.4): at g.Moment it either
	// proceeds, with the grant and constraints it runs under, or commits
	// the round as awaiting approval (Verdict.Paused; the run ends after
	// it and the mode returns at once).
	Gate(ctx context.Context, g Gate) (Verdict, error)
}
