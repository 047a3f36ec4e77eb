// Package experiment is the record of a prompt experiment (DESIGN §10.4)
// and the contract of the store that keeps it: the types both stores
// encode and the experiments package runs. It imports only workflow, so a
// store can implement Store without the runner's dependencies.
package experiment

import (
	"context"
	"encoding/json"
	"time"

	"github.com/twostep/twostep/workflow"
)

// Status is where an experiment is.
type Status string

// The statuses of DESIGN §10.4.
const (
	StatusRunning   Status = "running"
	StatusCompleted Status = "completed"
	StatusStopped   Status = "stopped"
	StatusFailed    Status = "failed"
)

// PrefixExperiment starts every experiment id.
const PrefixExperiment = "ex_"

// ModelRef names a model by provider and model name, as the YAML models:
// section does; keys and endpoints are the gateway's environment.
type ModelRef struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
}

// Spec is what an experiment re-runs and how: the recorded accepted calls
// of Stage in Workflows (or, with none, every workflow with such calls
// since Since, of Action when set), rendered with Templates (by template
// name: "stage1", "stage2") and sent to Model (nil: the gateway's).
type Spec struct {
	Stage     workflow.Stage    `json:"stage"`
	Workflows []string          `json:"workflows,omitempty"`
	Since     time.Time         `json:"since,omitzero"`
	Action    string            `json:"action,omitempty"`
	Templates map[string]string `json:"templates,omitempty"`
	Model     *ModelRef         `json:"model,omitempty"`
	// StartedBy is the admin who started it: its model calls count in
	// that user's budget ("" counts them in none).
	StartedBy string `json:"startedBy,omitempty"`
}

// Agreement says where a call's new result agrees with the recorded one:
// Stage 1 sets Action, References (documents and connection) and Fields
// (the parameter names asked); Stage 2 sets Parameters, one entry per
// parameter either result has. All is true when every one of them agrees
// (and the call gave a result).
type Agreement struct {
	Action     *bool           `json:"action,omitempty"`
	References *bool           `json:"references,omitempty"`
	Fields     *bool           `json:"fields,omitempty"`
	Parameters map[string]bool `json:"parameters,omitempty"`
	All        bool            `json:"all"`
}

// Call is one recorded call re-run: the recorded and the new parsed
// result (Stage 1: the selection; Stage 2: the parameters), or Error when
// the call could not be re-run or its reply was rejected.
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

// Experiment is one experiment as stored and shown.
type Experiment struct {
	ID        string         `json:"id"`
	Status    Status         `json:"status"`
	Stage     workflow.Stage `json:"stage"`
	Spec      Spec           `json:"spec"`
	Calls     []Call         `json:"calls"`
	Totals    Totals         `json:"totals"`
	Error     string         `json:"error,omitempty"`
	CreatedAt time.Time      `json:"createdAt"`
	UpdatedAt time.Time      `json:"updatedAt"`
}

// Sum recomputes e.Totals from e.Calls.
func (e *Experiment) Sum() {
	t := Totals{Calls: len(e.Calls)}
	usd, priced := 0.0, len(e.Calls) > 0
	for _, c := range e.Calls {
		if c.Agreement.All {
			t.Agreed++
		}
		t.Tokens += c.Tokens
		if c.USD == nil {
			priced = false
		} else {
			usd += *c.USD
		}
	}
	if priced {
		t.USD = &usd
	}
	e.Totals = t
}

// Store keeps experiments. Implementations guarantee: Put replaces the
// whole experiment atomically; Get of an unknown id is KindNotFound;
// Running lists the ids of experiments last Put with StatusRunning; a
// stop request (RequestStop) outlives any Put and is seen by Stopping;
// ClaimExperiment gives one owner at a time the lease of an experiment
// until ttl passes (true when owner holds it now: taken, or renewed).
// Every operation touches one experiment's keys and the running index
// only, so a Redis Cluster serves it.
type Store interface {
	PutExperiment(ctx context.Context, e *Experiment) error
	GetExperiment(ctx context.Context, id string) (*Experiment, error)
	RunningExperiments(ctx context.Context) ([]string, error)
	RequestStop(ctx context.Context, id string) error
	Stopping(ctx context.Context, id string) (bool, error)
	ClaimExperiment(ctx context.Context, id, owner string, ttl time.Duration) (bool, error)
}
