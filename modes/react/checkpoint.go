package react

import "github.com/twostep/twostep/workflow"

// state is React's own part of a checkpoint (workflow.Checkpoint.Mode),
// stored under the member names it had as a field of workflow.Checkpoint.
type state struct {
	// CompactionSkipped says this step's history compaction was tried and
	// its reply rejected: Stage 1 falls back to dropping the oldest
	// entries instead of asking again.
	CompactionSkipped bool `json:"compactionSkipped,omitempty"`
}

// stateOf reads React's part of cp (the zero state for nil).
func stateOf(cp *workflow.Checkpoint) (state, error) {
	var s state
	if cp == nil {
		return s, nil
	}
	err := cp.Mode.Decode(&s)
	return s, err
}

// compactionSkippedCheckpoint is the checkpoint after a rejected
// compaction: Stage 1 again, without asking for a compaction.
func compactionSkippedCheckpoint() (workflow.Checkpoint, error) {
	mode, err := workflow.NewModeState(state{CompactionSkipped: true})
	return workflow.Checkpoint{Phase: workflow.PhaseSelect, Mode: mode}, err
}
