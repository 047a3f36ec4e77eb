package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"
)

// ExperimentRequest starts an experiment (POST /admin/v1/experiments, an
// admin token): the recorded accepted calls of Stage ("stage1" or
// "stage2") in Workflows, or those Filter selects, re-run under Override.
type ExperimentRequest struct {
	Stage     string              `json:"stage"`
	Workflows []string            `json:"workflows,omitempty"`
	Filter    *ExperimentFilter   `json:"filter,omitempty"`
	Override  *ExperimentOverride `json:"override,omitempty"`
}

// ExperimentFilter selects recorded calls by time and by action.
type ExperimentFilter struct {
	Since  time.Time `json:"since,omitzero"`
	Action string    `json:"action,omitempty"`
}

// ExperimentOverride is what an experiment changes: template sources by
// name and/or the model.
type ExperimentOverride struct {
	Templates map[string]string `json:"templates,omitempty"`
	Model     *ModelRef         `json:"model,omitempty"`
}

// ModelRef names a model as the gateway's YAML models: section does.
type ModelRef struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
}

// Experiment is an experiment's state: Status is running, completed,
// stopped or failed.
type Experiment struct {
	ID     string           `json:"id"`
	Status string           `json:"status"`
	Stage  string           `json:"stage"`
	Calls  []ExperimentCall `json:"calls"`
	Totals ExperimentTotals `json:"totals"`
	Error  string           `json:"error,omitempty"`
}

// ExperimentCall is one recorded call re-run: the recorded and the new
// parsed result and where they agree.
type ExperimentCall struct {
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

// Agreement says where a call agrees: Stage 1 on Action, References and
// Fields, Stage 2 per parameter; All when everything does.
type Agreement struct {
	Action     *bool           `json:"action,omitempty"`
	References *bool           `json:"references,omitempty"`
	Fields     *bool           `json:"fields,omitempty"`
	Parameters map[string]bool `json:"parameters,omitempty"`
	All        bool            `json:"all"`
}

// ExperimentTotals sums an experiment's calls.
type ExperimentTotals struct {
	Calls  int      `json:"calls"`
	Agreed int      `json:"agreed"`
	Tokens int      `json:"tokens"`
	USD    *float64 `json:"usd,omitempty"`
}

// StartExperiment starts an experiment and returns its id.
func (c *Client) StartExperiment(ctx context.Context, req ExperimentRequest) (string, error) {
	var out struct {
		ID string `json:"id"`
	}
	if _, err := c.do(ctx, http.MethodPost, "/admin/v1/experiments", req, nil, &out); err != nil {
		return "", err
	}
	return out.ID, nil
}

// Experiment returns an experiment.
func (c *Client) Experiment(ctx context.Context, id string) (*Experiment, error) {
	var out Experiment
	if _, err := c.do(ctx, http.MethodGet, "/admin/v1/experiments/"+url.PathEscape(id), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// StopExperiment asks a running experiment to stop.
func (c *Client) StopExperiment(ctx context.Context, id string) (*Experiment, error) {
	var out Experiment
	if _, err := c.do(ctx, http.MethodPost, "/admin/v1/experiments/"+url.PathEscape(id)+"/stop", nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
