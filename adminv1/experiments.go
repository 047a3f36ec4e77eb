package adminv1

import (
	"encoding/json"
	"time"
)

// ExperimentBody is the body of POST /admin/v1/experiments: the recorded
// accepted calls of Stage in Workflows, or those Filter selects, re-run
// under Override.
type ExperimentBody struct {
	Stage     string              `json:"stage" enum:"stage1,stage2" doc:"Which stage's recorded calls to re-run"`
	Workflows []string            `json:"workflows,omitempty" maxItems:"1000" doc:"The workflows whose calls to re-run (instead of filter)"`
	Filter    *ExperimentFilter   `json:"filter,omitempty" doc:"Which recorded calls to re-run (instead of workflows); none: every one"`
	Override  *ExperimentOverride `json:"override,omitempty" doc:"What changes: templates and/or the model"`
}

// ExperimentFilter selects recorded calls by time and action.
type ExperimentFilter struct {
	Since  time.Time `json:"since,omitzero" doc:"Only calls recorded at or after this time (RFC 3339)"`
	Action string    `json:"action,omitempty" maxLength:"200" doc:"Only calls of steps that selected this action"`
}

// ExperimentOverride is what an experiment changes: template sources by
// name and/or the model.
type ExperimentOverride struct {
	Templates map[string]string `json:"templates,omitempty" doc:"Template sources by name (stage1 or stage2), parsed like *.tmpl files"`
	Model     *ModelRef         `json:"model,omitempty" doc:"Another model, built like a YAML models: entry"`
}

// ExperimentID is the answer of POST /admin/v1/experiments.
type ExperimentID struct {
	ID string `json:"id"`
}

// ModelRef names a model by provider and model name, as the gateway's
// YAML models: section does.
type ModelRef struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
}

// Spec is what an experiment re-runs and how: the recorded accepted calls
// of Stage in Workflows (or, with none, since Since, of Action when set),
// rendered with Templates and sent to Model (none: the gateway's).
type Spec struct {
	Stage     string            `json:"stage"`
	Workflows []string          `json:"workflows,omitempty"`
	Since     time.Time         `json:"since,omitzero"`
	Action    string            `json:"action,omitempty"`
	Templates map[string]string `json:"templates,omitempty"`
	Model     *ModelRef         `json:"model,omitempty"`
	// StartedBy is the admin whose budget the calls count in.
	StartedBy string `json:"startedBy,omitempty"`
}

// Agreement says where a call's new result agrees with the recorded one:
// Stage 1 on Action, References and Fields, Stage 2 per parameter; All
// when everything does.
type Agreement struct {
	Action     *bool           `json:"action,omitempty"`
	References *bool           `json:"references,omitempty"`
	Fields     *bool           `json:"fields,omitempty"`
	Parameters map[string]bool `json:"parameters,omitempty"`
	All        bool            `json:"all"`
}

// Call is one recorded call re-run: the recorded and the new parsed
// result (Stage 1: the selection; Stage 2: the parameters) and where they
// agree, or Error when the call could not be re-run.
type Call struct {
	TraceID    string          `json:"traceId"`
	WorkflowID string          `json:"workflowId"`
	Round      int             `json:"round"`
	Step       int             `json:"step"`
	Recorded   json.RawMessage `json:"recorded"`
	Result     json.RawMessage `json:"result"`
	Error      string          `json:"error,omitempty"`
	Agreement  Agreement       `json:"agreement"`
	Model      string          `json:"model,omitempty"`
	Tokens     int             `json:"tokens"`
	USD        *float64        `json:"usd,omitempty"`
}

// Totals sums an experiment's calls: how many, how many agree in all,
// their tokens and, when every call's model has a price, their cost.
type Totals struct {
	Calls  int      `json:"calls"`
	Agreed int      `json:"agreed"`
	Tokens int      `json:"tokens"`
	USD    *float64 `json:"usd,omitempty"`
}

// Experiment is an experiment's state (GET /admin/v1/experiments/{id}):
// Status is running, completed, stopped or failed.
type Experiment struct {
	ID        string    `json:"id"`
	Status    string    `json:"status"`
	Stage     string    `json:"stage"`
	Spec      Spec      `json:"spec"`
	Calls     []Call    `json:"calls"`
	Totals    Totals    `json:"totals"`
	Error     string    `json:"error,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}
