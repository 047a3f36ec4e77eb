package actionplan

import "github.com/twostep/twostep/workflow"

// state is the action-plan mode's own part of a checkpoint
// (workflow.Checkpoint.Mode), stored under the member names it had as
// fields of workflow.Checkpoint.
type state struct {
	// Plan is the round's plan, saved before its first step runs.
	Plan []workflow.PlanStep `json:"plan,omitempty"`
	// PlanIndex is the index in Plan of the step to run next.
	PlanIndex int `json:"planIndex,omitempty"`
	// Replans counts the re-planning calls of this round whose plan was
	// saved, so the per-round limit survives a restart.
	Replans int `json:"replans,omitempty"`
}

// stateOf reads the mode's part of cp (the zero state for nil).
func stateOf(cp *workflow.Checkpoint) (state, error) {
	var s state
	if cp == nil {
		return s, nil
	}
	err := cp.Mode.Decode(&s)
	return s, err
}

// checkpoint is the checkpoint of phase with the mode's state s.
func checkpoint(phase workflow.Phase, s state) (*workflow.Checkpoint, error) {
	mode, err := workflow.NewModeState(s)
	if err != nil {
		return nil, err
	}
	return &workflow.Checkpoint{Phase: phase, Mode: mode}, nil
}
