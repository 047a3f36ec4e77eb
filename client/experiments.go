package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/twostep/twostep/adminv1"
)

// The experiment routes' wire types (package adminv1), under the
// client's names.
type (
	// ExperimentRequest starts an experiment (POST /admin/v1/experiments,
	// an admin token): the recorded accepted calls of Stage ("stage1" or
	// "stage2") in Workflows, or those Filter selects, re-run under
	// Override.
	ExperimentRequest = adminv1.ExperimentBody
	// ExperimentFilter selects recorded calls by time and by action.
	ExperimentFilter = adminv1.ExperimentFilter
	// ExperimentOverride is what an experiment changes: template sources
	// by name and/or the model.
	ExperimentOverride = adminv1.ExperimentOverride
	// ModelRef names a model as the gateway's YAML models: section does.
	ModelRef = adminv1.ModelRef
	// Experiment is an experiment's state: Status is running, completed,
	// stopped or failed.
	Experiment = adminv1.Experiment
	// ExperimentCall is one recorded call re-run: the recorded and the new
	// parsed result and where they agree.
	ExperimentCall = adminv1.Call
	// Agreement says where a call agrees: Stage 1 on Action, References
	// and Fields, Stage 2 per parameter; All when everything does.
	Agreement = adminv1.Agreement
	// ExperimentTotals sums an experiment's calls.
	ExperimentTotals = adminv1.Totals
)

// StartExperiment starts an experiment and returns its id.
func (c *Client) StartExperiment(ctx context.Context, req ExperimentRequest) (string, error) {
	var out adminv1.ExperimentID
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
