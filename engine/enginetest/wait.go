package enginetest

import (
	"context"
	"time"

	"github.com/twostep/twostep/changefeed"
	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/workflow"
)

// awaitPoll is how often Await reads the store without a change: the
// commits of another instance are not published here.
const awaitPoll = 50 * time.Millisecond

// Await returns workflow id once its round no longer runs (any status but
// running), or ctx's error. It reads it with get at once, after each
// change changes publishes of it, and every awaitPoll (the round may run
// on another instance). It does not check ownership.
func Await(ctx context.Context, changes workflow.Changes, get func(context.Context, string) (*workflow.Workflow, error), id string) (*workflow.Workflow, error) {
	changed, cancel := changes.Subscribe(id)
	defer cancel()
	poll := time.NewTicker(awaitPoll)
	defer poll.Stop()
	for {
		wf, err := get(ctx, id)
		if err != nil || wf.Status != workflow.StatusRunning {
			return wf, err
		}
		select {
		case <-ctx.Done():
			return nil, workflow.WrapKind(workflow.KindUnavailable, ctx.Err(), "Await(%q)", id)
		case <-changed:
		case <-poll.C:
		}
	}
}

// Engine is an engine with the change service it publishes to, so a test
// can wait for its rounds.
type Engine struct {
	*engine.Engine
	Changes workflow.Changes
}

// NewEngine is engine.New publishing to a new changefeed.Feed
// (cfg.Changes, unless the caller set one).
func NewEngine(cfg engine.Config, store workflow.Store, model workflow.Model,
	reg workflow.Registry, modes map[workflow.ModeName]workflow.Mode) (*Engine, error) {
	if cfg.Changes == nil {
		cfg.Changes = changefeed.New()
	}
	e, err := engine.New(cfg, store, model, reg, modes)
	if err != nil {
		return nil, err
	}
	return &Engine{Engine: e, Changes: cfg.Changes}, nil
}

// Wait returns workflow id once its round no longer runs (Await over e's
// changes, reading as an administrator), or ctx's error.
func (e *Engine) Wait(ctx context.Context, id string) (*workflow.Workflow, error) {
	return Await(ctx, e.Changes, e.Admin().Get, id)
}
