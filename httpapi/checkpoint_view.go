package httpapi

import "github.com/twostep/twostep/workflow"

// CheckpointState is a step's persisted position as the admin API shows
// it: workflow.Checkpoint without the checkpoint a rejected approval
// continues from. Its arrays are never null.
type CheckpointState struct {
	Step              int                     `json:"step" doc:"The step the round runs, or goes on with when resumed"`
	Phase             workflow.Phase          `json:"phase"`
	Selection         *workflow.Selection     `json:"selection,omitempty" doc:"The Stage 1 selection, once Stage 1 succeeded"`
	Parameters        map[string]any          `json:"parameters,omitempty" doc:"The Stage 2 parameters, once Stage 2 succeeded"`
	Failures          int                     `json:"failures" doc:"Failed steps in a row in this round"`
	Attempt           int                     `json:"attempt,omitempty" doc:"Rejected model calls of the current phase"`
	Feedback          []string                `json:"feedback,omitempty" doc:"The problems of the last rejected call"`
	MaxTokens         int                     `json:"maxTokens,omitempty"`
	Previous          string                  `json:"previous,omitempty"`
	Plan              []workflow.PlanStep     `json:"plan,omitempty"`
	PlanIndex         int                     `json:"planIndex,omitempty"`
	Replans           int                     `json:"replans,omitempty"`
	CompactionSkipped bool                    `json:"compactionSkipped,omitempty"`
	Approval          *workflow.ApprovalGrant `json:"approval,omitempty"`
}

// CheckpointView is workflow.Checkpoint as the admin API shows it. The
// engine's checkpoint is recursive (AfterReject is a Checkpoint); this view
// stops after one level, which is all the engine ever nests, so the
// OpenAPI document has no recursive schema (contract-test generators such
// as Portman refuse one).
type CheckpointView struct {
	CheckpointState
	AfterReject *CheckpointState `json:"afterReject,omitempty" doc:"While the step awaits approval: the checkpoint the round continues from if the approval is rejected or expires"`
}

// viewCheckpoint returns c's view, nil for nil.
func viewCheckpoint(c *workflow.Checkpoint) *CheckpointView {
	if c == nil {
		return nil
	}
	v := &CheckpointView{CheckpointState: checkpointState(c)}
	if c.AfterReject != nil {
		s := checkpointState(c.AfterReject)
		v.AfterReject = &s
	}
	return v
}

func checkpointState(c *workflow.Checkpoint) CheckpointState {
	return CheckpointState{
		Step: c.Step, Phase: c.Phase, Selection: viewSelection(c.Selection), Parameters: c.Parameters,
		Failures: c.Failures, Attempt: c.Attempt, Feedback: c.Feedback, MaxTokens: c.MaxTokens,
		Previous: c.Previous, Plan: c.Plan, PlanIndex: c.PlanIndex, Replans: c.Replans,
		CompactionSkipped: c.CompactionSkipped, Approval: c.Approval,
	}
}

// viewSelection returns a copy of s whose arrays are never null, as the
// OpenAPI document promises; nil for nil.
func viewSelection(s *workflow.Selection) *workflow.Selection {
	if s == nil {
		return nil
	}
	v := *s
	v.Learnings = nonNil(v.Learnings)
	v.RequiredInputDocuments = nonNil(v.RequiredInputDocuments)
	v.ParametersSchema.Fields = nonNil(v.ParametersSchema.Fields)
	return &v
}

// nonNil returns s, or an empty slice for nil, so it encodes as [] and
// never as null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
