package workflow

import (
	"context"
	"encoding/json"
)

// Mode runs the steps of a round: react (Stage 1 -> Stage 2 -> execute) or
// actionplan. The engine owns the loop, the persistence and every
// round-ending rule; a mode only decides what the next phase of the current
// step is and hands its outcome to the Run.
//
// Contract: each call of Step advances the round by exactly one persisted
// transition — Run.Checkpoint (the next phase of the same step),
// Run.AppendSummary (a history compaction, the same phase again) or
// Run.CommitStep (the step's record, which also ends the round when a rule
// says so) — and then returns nil. A Step that returns nil without either is
// a bug; the engine fails the round rather than loop. Step reads the phase to
// run from Run.Workflow().Checkpoint, so a step interrupted by a crash resumes
// after its last persisted phase. Errors returned by Run.Generate must be
// returned unchanged (the engine tells a model outage from a cancellation by
// them); a rejected model reply is not an error.
type Mode interface {
	// Step runs the next phase of the current step.
	Step(ctx context.Context, run Run) error
	// Closing builds the assistant message that ends a round at maxSteps.
	// It lists what the round did and makes no model call.
	Closing(run Run) Message
}

// StepResult is how a mode hands a finished step to Run.CommitStep. The
// engine commits it atomically with the new workflow state, after applying
// the round-ending rules (maxSteps, the failure breaker, End).
type StepResult struct {
	// Action names the step's action, for the Observer.
	Action string
	// Messages are the step's record: its action message (success or
	// error), or, for a step that ends the round, its assistant message.
	Messages []Message
	// Documents are the contents of the documents the messages carry.
	Documents []DocumentContent
	// Failed says the step failed (rejected replies, an action error): it
	// counts toward the breaker. A step that did not fail resets it.
	Failed bool
	// Executed says an action ran (counted in Stats.Actions).
	Executed bool
	// End, when set, ends the round with this outcome (e.g. completed by
	// workflow.complete, or plan_unavailable).
	End *RoundEnd
	// Next is the checkpoint the next step starts from; nil means a fresh
	// PhaseSelect. The engine sets its Failures. Like Run.Checkpoint's, it
	// is handed over with the commit: not to be changed afterwards.
	Next *Checkpoint
}

// RoundEnd is the outcome of a round that a mode ends by itself.
type RoundEnd struct {
	Status Status
	Reason StopReason
	// Error is a caller-safe explanation for a failed round.
	Error string
}

// ModelCall is one model call made through Run.Generate, with what its
// trace needs.
type ModelCall struct {
	Stage    Stage
	Attempt  int
	Template string
	Prompt   []PromptMessage
	// Inputs are the placeholder values Prompt was rendered from, kept in
	// the trace (Trace.Inputs); nil keeps none.
	Inputs map[string]string
	// JSON asks for a JSON object reply; MaxTokens bounds it (0: default).
	JSON      bool
	MaxTokens int
	// Output is the reply's schema for providers with native structured
	// output (ModelRequest.Output); nil sends none.
	Output *OutputSchema
	// Facts is what Prompt was built from, sent as ModelRequest.Facts.
	Facts PromptFacts
	// CacheKey and CachePrefix are sent as ModelRequest's: the key of the
	// requests that share a prompt prefix ("<workflowId>:<stage>") and how
	// many leading Prompt messages stay byte-identical between them.
	CacheKey    string
	CachePrefix int
	// CacheSealed is sent as ModelRequest.CacheSealed: how many leading
	// Prompt messages change only at a seal or a new document.
	CacheSealed int
	// FromNative, when set, maps a reply that came in a native mode (tool,
	// json_schema) back to the form Check reads — e.g. it drops the nulls
	// strict mode makes the model write for optional fields — before
	// Check runs. The trace keeps the raw reply.
	FromNative func(reply string) string
	// Check parses and validates the reply. It returns the parsed JSON kept
	// in the trace and the rejection text ("" when the reply is accepted).
	// Nil accepts every reply. A reply cut at the token limit
	// (ModelResponse.Truncated) is never checked: the trace records
	// TruncatedProblem and the caller must treat the call as rejected.
	Check func(reply string) (parsed json.RawMessage, rejection string)
	// Ungrounded, when set, is called after Check and returns the paths
	// of the checked reply's values that are not grounded in what the
	// call was shown, for Trace.Ungrounded (a Stage 2 call's).
	Ungrounded func() []string
	// Stream, when set, is handed each piece of the reply as a streaming
	// model writes it (ModelRequest.Stream; it must not block). The
	// engine streams Stage 1 and Stage 2 calls whether or not it is set,
	// for the deltas it publishes (DESIGN §11.3).
	Stream func(chunk string)
	// Early, when set, marks a Stage 2 call started while Stage 1's reply
	// still streams (DESIGN §11.2); the mode settles it. Such a call may
	// run beside the Stage 1 call on another goroutine: it is the one
	// Generate that may overlap another, and no commit may overlap it.
	Early *EarlyStart
}
