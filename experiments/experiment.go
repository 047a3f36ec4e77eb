// Package experiments re-runs a stage's recorded model calls under an
// override (DESIGN §10.4): another template, another model, or both. It
// reads recorded traces and calls a model; it never executes an action and
// never changes a workflow. Stage 2 keeps Stage 1's recorded decision and
// is rendered again from it; Stage 1 is rendered again from the
// placeholder values its trace kept (Trace.Inputs) and decides anew. Each
// call is scored against the recorded one: Stage 1 on action, references
// and fields separately, Stage 2 parameter by parameter.
//
// Experiments are kept in a Store, so they survive a restart: an instance
// holds a lease on each experiment it runs, renewed while it runs, and any
// instance finds running experiments whose lease expired and finishes
// them (Runner.Recover). Datasets (Dataset) stream the same recorded calls
// as JSON Lines.
package experiments

import "github.com/twostep/twostep/workflow/experiment"

// The experiment record and its store contract live in workflow/experiment
// (the stores implement it without this package's dependencies); these
// names are theirs.
type (
	// Status is where an experiment is.
	Status = experiment.Status
	// ModelRef names a model by provider and model name.
	ModelRef = experiment.ModelRef
	// Spec is what an experiment re-runs and how.
	Spec = experiment.Spec
	// Agreement says where a call's new result agrees with the recorded one.
	Agreement = experiment.Agreement
	// Call is one recorded call re-run.
	Call = experiment.Call
	// Totals sums an experiment's calls.
	Totals = experiment.Totals
	// Experiment is one experiment as stored and shown.
	Experiment = experiment.Experiment
	// Store keeps experiments.
	Store = experiment.Store
)

// The statuses of DESIGN §10.4, and the prefix of every experiment id.
const (
	StatusRunning    = experiment.StatusRunning
	StatusCompleted  = experiment.StatusCompleted
	StatusStopped    = experiment.StatusStopped
	StatusFailed     = experiment.StatusFailed
	PrefixExperiment = experiment.PrefixExperiment
)
