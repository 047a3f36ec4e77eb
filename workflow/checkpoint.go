package workflow

import (
	"maps"
	"slices"
)

// Phase is the persisted position of the running step (DESIGN §3):
//
//	select -> parameterize -> execute -> commit
//
// A phase is saved with Store.Commit before the next model call, so a
// restarted engine resumes with the phase after the last finished call.
//
// React mode's history compaction runs at the start of select (before the
// step's first Stage 1 call) and is committed by Run.AppendSummary as a
// summary message, leaving the phase as it was: whether a compaction is due
// follows from the committed messages, so a restart repeats an uncommitted
// compaction call and never a committed one.
type Phase string

// The step phases.
const (
	PhaseSelect       Phase = "select"
	PhaseParameterize Phase = "parameterize"
	PhaseExecute      Phase = "execute"
	PhaseCommit       Phase = "commit"
	// PhasePlan is the action-plan mode's planning call; after it the plan
	// steps run with PhaseExecute.
	PhasePlan Phase = "plan"
	// PhaseReplan is the action-plan mode's re-planning call after a failed
	// plan step; its new plan replaces the steps not yet run.
	PhaseReplan Phase = "replan"
)

// FieldSpec is one parameter Stage 1 asks Stage 2 to fill.
type FieldSpec struct {
	Name string `json:"name"`
	Type string `json:"type"`
	// Items is the element type of an "array" field the action does not
	// register ("" when Stage 1 named none).
	Items       string `json:"items,omitempty"`
	Required    bool   `json:"required"`
	Description string `json:"description,omitempty"`
}

// ParametersSchema is Stage 1's compact description of the parameters it
// wants; Stage 2's schema is rendered from the action's registered schema
// limited to these fields plus every required one.
type ParametersSchema struct {
	Fields []FieldSpec `json:"fields"`
}

// Selection is a validated Stage 1 reply: which action to run and what it
// needs, with no parameter values.
type Selection struct {
	Action                 string           `json:"action"`
	ActionObjective        string           `json:"actionObjective"`
	Learnings              []string         `json:"learnings"`
	RequiredInputDocuments []string         `json:"requiredInputDocuments"`
	RequiredConnection     string           `json:"requiredConnection,omitempty"`
	ParametersContext      string           `json:"parametersContext"`
	ParametersSchema       ParametersSchema `json:"parametersSchema"`
}

// PlanStep is one step of an action-plan round, after its legacy reference
// fields were taken out of the parameters.
type PlanStep struct {
	Action      string         `json:"action"`
	Parameters  map[string]any `json:"parameters"`
	ResultLabel string         `json:"resultLabel,omitempty"`
	Documents   []string       `json:"documents,omitempty"`
	Connection  string         `json:"connection,omitempty"`
}

// Checkpoint is the persisted position of a round: the step it runs (or
// goes on with when resumed) and that step's phase and state.
type Checkpoint struct {
	// Step is the number of the step this checkpoint belongs to, the one
	// place the engine keeps where the round goes on: while the round runs
	// it equals Workflow.Step; after the failure breaker ended the round it
	// is the step after the last one run. The engine sets it (Run.Checkpoint
	// keeps the current step, CommitStep and a pause (Gate) name the next); a mode
	// never does. Zero only in a checkpoint stored before the field existed
	// (see upgradeCheckpoint).
	Step  int   `json:"step"`
	Phase Phase `json:"phase"`
	// Selection is set once Stage 1 has succeeded.
	Selection *Selection `json:"selection,omitempty"`
	// Parameters is set once Stage 2 has succeeded.
	Parameters map[string]any `json:"parameters,omitempty"`
	// Failures counts failed steps in a row in this round.
	Failures int `json:"failures"`
	// Attempt counts the model calls of the current phase that were made
	// and rejected (0: none yet), and Feedback holds the problems of the
	// last of them. A mode persists both after every rejected reply, so a
	// restarted engine resumes the phase's retries with attempt Attempt+1
	// and the same VALIDATION_FEEDBACK, never repeating a rejected call. A
	// transition to another phase or step starts again from zero.
	Attempt  int      `json:"attempt,omitempty"`
	Feedback []string `json:"feedback,omitempty"`
	// MaxTokens is the maxTokens of the phase's next model call after a
	// reply cut at the token limit (RetryMaxTokens); 0 sends the default.
	MaxTokens int `json:"maxTokens,omitempty"`
	// Previous is the rejected reply of the phase's last model call when
	// the next call quotes it (the action-plan mode's repair call, after a
	// planning reply that held no plan), so a restarted engine makes that
	// call without repeating the one that produced it.
	Previous string `json:"previous,omitempty"`
	// Approval is the approval decided "approve" for this step's call: the
	// step executes with its parameters and does not pause again.
	Approval *ApprovalGrant `json:"approval,omitempty"`
	// AfterReject, while the step awaits approval, is the checkpoint the
	// round continues from if the approval is rejected or expires.
	AfterReject *Checkpoint `json:"afterReject,omitempty"`
	// Mode is the mode's own part of the checkpoint (react's skipped
	// compaction, actionplan's plan and its progress), opaque to the
	// engine and the stores: a JSON object, nil when empty, that only its
	// mode reads and writes (see ModeState). Stored, its members sit
	// beside the common ones, where they were when they were fields of
	// Checkpoint, so the records of every version decode alike.
	Mode ModeState `json:"-"`
}

// Clone returns a deep copy of the checkpoint's containers (parameter values
// are copied one level deep).
func (c *Checkpoint) Clone() *Checkpoint {
	if c == nil {
		return nil
	}
	d := *c
	if c.Selection != nil {
		s := *c.Selection
		s.Learnings = append([]string(nil), s.Learnings...)
		s.RequiredInputDocuments = append([]string(nil), s.RequiredInputDocuments...)
		s.ParametersSchema.Fields = append([]FieldSpec(nil), s.ParametersSchema.Fields...)
		d.Selection = &s
	}
	d.Parameters = maps.Clone(c.Parameters)
	d.Feedback = slices.Clone(c.Feedback)
	if c.Approval != nil {
		g := *c.Approval
		g.Parameters = maps.Clone(c.Approval.Parameters)
		g.Constraints = CloneJSON(c.Approval.Constraints)
		d.Approval = &g
	}
	d.AfterReject = c.AfterReject.Clone()
	// d.Mode is shared: a ModeState is never changed in place.
	return &d
}
