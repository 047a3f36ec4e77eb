package experiments

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/workflow"
)

// saveEvery bounds how often a running experiment's progress is stored.
const saveEvery = 500 * time.Millisecond

// run re-runs e's calls not re-run yet (a taken-over experiment keeps the
// calls stored before) and stores the outcome. It holds e's lease while it
// runs: a lost lease ends it without a write; Close (the Runner's context)
// leaves it running in the store for another instance to finish.
func (r *Runner) run(ctx context.Context, e *Experiment, model workflow.Model) {
	tmpls, err := r.templates(e.Spec)
	if err != nil {
		e.Status, e.Error = StatusFailed, workflow.PublicMessage(err)
		r.save(ctx, e)
		return
	}
	s := &setup{stage: e.Spec.Stage, templates: tmpls, model: model, builder: r.opts.Prompts,
		registry: r.opts.Registry, prices: r.opts.Prices}
	if r.opts.Budget != nil && e.Spec.StartedBy != "" {
		ctx = workflow.WithModelGuard(ctx, chargeTo(r.opts.Budget, e.Spec.StartedBy))
	}
	runCtx, cancelRun := context.WithCancel(ctx)
	defer cancelRun()
	var lost atomic.Bool
	hbDone := make(chan struct{})
	go func() {
		defer close(hbDone)
		r.heartbeat(runCtx, e.ID, &lost, cancelRun)
	}()
	defer func() { <-hbDone }()
	p := &progress{e: e}
	saved := make(chan struct{})
	go func() {
		defer close(saved)
		r.saveProgress(runCtx, p)
	}()
	err = r.rerunAll(runCtx, s, p)
	cancelRun()
	<-hbDone
	<-saved
	if lost.Load() {
		return // another instance holds the experiment now
	}
	r.finish(ctx, e, err)
}

// progress is a running experiment whose re-runs add their calls
// concurrently; dirty says calls were added since the last save.
type progress struct {
	mu    sync.Mutex
	e     *Experiment
	dirty bool
}

// add keeps one re-run call.
func (p *progress) add(call Call) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.e.Calls = append(p.e.Calls, call)
	p.dirty = true
}

// saveProgress stores the calls done so far every saveEvery, while
// there are new ones, until ctx ends.
func (r *Runner) saveProgress(ctx context.Context, p *progress) {
	t := time.NewTicker(saveEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		p.mu.Lock()
		if p.dirty {
			p.dirty = false
			r.save(ctx, sorted(p.e))
		}
		p.mu.Unlock()
	}
}

// rerunAll re-runs, at most Concurrency at once, every recorded call the
// experiment selects and has not re-run yet, each redacted; it returns
// the first error of the listing or of a re-run.
func (r *Runner) rerunAll(ctx context.Context, s *setup, p *progress) error {
	e := p.e
	done := map[string]bool{}
	for _, c := range e.Calls {
		done[c.TraceID] = true
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(r.opts.Concurrency)
	listErr := eachWorkflow(gctx, r.opts.Reads, e.Spec.Workflows, func(wf *workflow.Workflow) error {
		calls, err := r.recorded(gctx, wf, e.Spec)
		if err != nil {
			return err
		}
		for _, c := range calls {
			if done[c.trace.ID] {
				continue
			}
			g.Go(func() error {
				call, err := s.rerun(gctx, c)
				if err != nil {
					return err
				}
				call.Result = r.opts.Redactor.JSON(call.Result)
				call.Error = r.opts.Redactor.String(call.Error)
				p.add(call)
				return nil
			})
		}
		return nil
	})
	if runErr := g.Wait(); listErr == nil {
		listErr = runErr
	}
	return listErr
}

// finish stores e's outcome after its re-runs ended with err: stopped
// when a stop was asked, still running when the Runner closes (for the
// instance that takes it over), else failed or completed.
func (r *Runner) finish(ctx context.Context, e *Experiment, err error) {
	stopping, _ := r.opts.Store.Stopping(context.WithoutCancel(ctx), e.ID)
	switch {
	case stopping:
		e.Status = StatusStopped
	case r.ctx.Err() != nil:
	case err != nil:
		e.Status, e.Error = StatusFailed, workflow.PublicMessage(err)
	default:
		e.Status = StatusCompleted
	}
	r.save(ctx, sorted(e))
}

// chargeTo is the model guard of an experiment started by userID: each
// call reserves its prompt and output in userID's budget (refused with a
// *workflow.BudgetError once it is spent) and settles to what it used.
func chargeTo(b workflow.Budgeter, userID string) workflow.ModelGuard {
	return func(ctx context.Context, req workflow.ModelRequest) (func(workflow.ModelResponse), error) {
		need := int64(req.MaxTokens)
		if need <= 0 {
			need = reservedOutput
		}
		for _, m := range req.Messages {
			need += int64((len(m.Content)+3)/4 + 4)
		}
		res, err := b.Reserve(ctx, userID, need)
		if err != nil {
			return nil, err
		}
		return func(resp workflow.ModelResponse) {
			b.Settle(context.WithoutCancel(ctx), res, workflow.ModelUsage{Model: resp.Model, PromptTokens: resp.PromptTokens,
				CachedTokens: resp.CachedTokens, OutputTokens: resp.CompletionTokens})
		}, nil
	}
}

// reservedOutput is the output a re-run call without maxTokens reserves
// (a budget grants a call while it has room, so this only holds room for
// the calls under way).
const reservedOutput = 1024

// heartbeat renews the lease every third of its life, and cancels the run
// when the lease is lost (lost set) or a stop was asked.
func (r *Runner) heartbeat(ctx context.Context, id string, lost *atomic.Bool, cancel context.CancelFunc) {
	t := time.NewTicker(r.opts.LeaseTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		ok, err := r.opts.Store.ClaimExperiment(ctx, id, r.opts.Owner, r.opts.LeaseTTL)
		if err == nil && !ok {
			lost.Store(true)
			cancel()
			return
		}
		if stop, err := r.opts.Store.Stopping(ctx, id); err == nil && stop {
			cancel()
			return
		}
	}
}

// sorted sorts e's calls by trace id (the order they were recorded in).
func sorted(e *Experiment) *Experiment {
	slices.SortFunc(e.Calls, func(a, b Call) int { return strings.Compare(a.TraceID, b.TraceID) })
	return e
}

// recorded returns wf's recorded accepted calls of spec's stage that spec
// selects, with what their re-run reads.
func (r *Runner) recorded(ctx context.Context, wf *workflow.Workflow, spec Spec) ([]recorded, error) {
	if wf.UpdatedAt.Before(spec.Since) {
		return nil, nil
	}
	traces, err := r.opts.Reads.Traces(ctx, wf.ID)
	if err != nil {
		return nil, skipGone(err)
	}
	if !slices.ContainsFunc(traces, func(t workflow.Trace) bool { return Accepted(t, spec.Stage) }) {
		return nil, nil
	}
	_, msgs, err := r.opts.Reads.Messages(ctx, wf.ID, 0, 0)
	if err != nil {
		return nil, skipGone(err)
	}
	env := prompts.Stage1Env{Registry: workflow.UserRegistry(r.opts.Registry, wf.UserID), Messages: msgs,
		Connections: workflow.UserConnections(r.opts.Registry, wf.UserID)}
	var out []recorded
	var sel *workflow.Selection // the latest accepted Stage 1 selection of the step
	for _, t := range traces {
		if Accepted(t, workflow.StageOne) {
			s := prompts.ParseStage1(t.Response, env).Selection
			sel = &s
			if spec.Stage == workflow.StageTwo {
				continue
			}
		}
		if !Accepted(t, spec.Stage) || t.CreatedAt.Before(spec.Since) {
			continue
		}
		c := recorded{wf: wf, msgs: msgs, trace: t}
		if spec.Stage == workflow.StageTwo {
			c.selection = stepSelection(wf, t, sel, traces)
		}
		if spec.Action != "" && actionOf(c) != spec.Action {
			continue
		}
		out = append(out, c)
	}
	return out, nil
}

// stepSelection is the Stage 1 selection t's Stage 2 call was rendered
// from: last, when it was recorded for t's step, else the checkpoint's
// when t's step is the workflow's current one.
func stepSelection(wf *workflow.Workflow, t workflow.Trace, last *workflow.Selection, traces []workflow.Trace) *workflow.Selection {
	i := slices.IndexFunc(traces, func(c workflow.Trace) bool { return c.ID == t.ID })
	for j := i - 1; j >= 0; j-- {
		c := traces[j]
		if c.Round != t.Round || c.Step != t.Step {
			break
		}
		if Accepted(c, workflow.StageOne) {
			return last
		}
	}
	if cp := wf.Checkpoint; cp != nil && cp.Selection != nil && wf.Round == t.Round && wf.Step == t.Step {
		return cp.Selection
	}
	return nil
}

// actionOf is the action of c's step: Stage 2's selection, or the action
// Stage 1 replied with.
func actionOf(c recorded) string {
	if c.selection != nil {
		return c.selection.Action
	}
	var v struct {
		Action string `json:"action"`
	}
	_ = json.Unmarshal(c.trace.Parsed, &v)
	return v.Action
}
