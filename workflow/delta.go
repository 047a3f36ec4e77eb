package workflow

// Delta is a piece of a stage reply's field while the model writes it
// (DESIGN §11.3): Stage 1's actionObjective, or the message of Stage 2's
// workflow.complete. Deltas are not stored and carry no event id; the
// committed message stays the truth, and a watcher may miss deltas.
type Delta struct {
	// WorkflowID and UserID name the workflow (and its owner) whose round
	// streams.
	WorkflowID string
	UserID     string
	// Round and Step are the round step the reply belongs to.
	Round, Step int
	// Stage is the stage writing (StageOne or StageTwo).
	Stage Stage
	// Field is the reply field the text belongs to: "actionObjective" or
	// "message".
	Field string
	// Text is the new piece: the field's decoded text, appended to what
	// earlier deltas of the same field carried.
	Text string
}

// Deltas carries the deltas of streaming replies to whoever watches
// (event streams, AG-UI runs), on this instance and, where the store is
// shared, on others. PublishDelta never blocks; implementations are safe
// for concurrent use.
type Deltas interface {
	PublishDelta(d Delta)
}
