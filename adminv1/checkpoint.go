package adminv1

import "github.com/twostep/twostep/apiv1"

// CheckpointState is a step's persisted position as the admin API shows
// it: workflow.Checkpoint without the checkpoint a rejected approval
// continues from. Its arrays are never null.
type CheckpointState struct {
	Step              int            `json:"step" doc:"The step the round runs, or goes on with when resumed"`
	Phase             string         `json:"phase"`
	Selection         *Selection     `json:"selection,omitempty" doc:"The Stage 1 selection, once Stage 1 succeeded"`
	Parameters        map[string]any `json:"parameters,omitempty" doc:"The Stage 2 parameters, once Stage 2 succeeded"`
	Failures          int            `json:"failures" doc:"Failed steps in a row in this round"`
	Attempt           int            `json:"attempt,omitempty" doc:"Rejected model calls of the current phase"`
	Feedback          []string       `json:"feedback,omitempty" doc:"The problems of the last rejected call"`
	MaxTokens         int            `json:"maxTokens,omitempty"`
	Previous          string         `json:"previous,omitempty"`
	Plan              []PlanStep     `json:"plan,omitempty"`
	PlanIndex         int            `json:"planIndex,omitempty"`
	Replans           int            `json:"replans,omitempty"`
	CompactionSkipped bool           `json:"compactionSkipped,omitempty"`
	Approval          *ApprovalGrant `json:"approval,omitempty"`
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

// Selection is a validated Stage 1 reply (workflow.Selection) as the
// admin API shows it: which action to run and what it needs.
type Selection struct {
	Action                 string           `json:"action"`
	ActionObjective        string           `json:"actionObjective"`
	Learnings              []string         `json:"learnings"`
	RequiredInputDocuments []string         `json:"requiredInputDocuments"`
	RequiredConnection     string           `json:"requiredConnection,omitempty"`
	ParametersContext      string           `json:"parametersContext"`
	ParametersSchema       ParametersSchema `json:"parametersSchema"`
}

// ParametersSchema lists the parameters a selection asks Stage 2 for.
type ParametersSchema struct {
	Fields []apiv1.FieldSpec `json:"fields"`
}

// PlanStep is one step of an action-plan round (workflow.PlanStep).
type PlanStep struct {
	Action      string         `json:"action"`
	Parameters  map[string]any `json:"parameters" nullable:"true"`
	ResultLabel string         `json:"resultLabel,omitempty"`
	Documents   []string       `json:"documents,omitempty"`
	Connection  string         `json:"connection,omitempty"`
}

// ApprovalGrant is an approval decided "approve", kept in the checkpoint
// of the step it covers (workflow.ApprovalGrant).
type ApprovalGrant struct {
	ID          string         `json:"id"`
	Parameters  map[string]any `json:"parameters"`
	Kind        string         `json:"kind,omitempty"`
	Constraints map[string]any `json:"constraints,omitempty"`
}
