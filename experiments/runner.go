package experiments

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/twostep/twostep/economy"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/redact"
	"github.com/twostep/twostep/templates"
	"github.com/twostep/twostep/workflow"
)

// DefaultConcurrency is how many calls an experiment re-runs at once when
// Options.Concurrency is 0.
const DefaultConcurrency = 4

// DefaultMaxRunning is how many experiments may run at once when
// Options.MaxRunning is 0.
const DefaultMaxRunning = 2

// DefaultLeaseTTL is an experiment lease's life when Options.LeaseTTL is
// 0 (a round's default too): an instance that dies leaves its
// experiments to another after it.
const DefaultLeaseTTL = 10 * time.Second

// OpenModel builds the model an override names, through the same wiring as
// configured models; close releases it.
type OpenModel func(ctx context.Context, ref ModelRef) (m workflow.Model, close func(), err error)

// Options configures a Runner; Store, Reads, Registry, Prompts, Model and
// Owner are required.
type Options struct {
	Store    Store
	Reads    Reads
	Registry workflow.Registry
	// Prompts must be the builder the modes render with.
	Prompts *prompts.Builder
	// Model answers calls without a model override: the engine's.
	Model workflow.Model
	// OpenModel builds an override's model; nil refuses model overrides.
	OpenModel OpenModel
	Prices    economy.Prices
	// Redactor scrubs the new replies' results; nil redacts nothing.
	Redactor *redact.Redactor
	// Owner names this instance in leases (e.g. its INSTANCE_ID).
	Owner       string
	Concurrency int
	// MaxRunning bounds the experiments running at once, counted in the
	// store over every instance (0: DefaultMaxRunning); Start refuses
	// another with KindTooMany.
	MaxRunning int
	// Budget, when set, counts each re-run call in the budget of the
	// admin who started the experiment (Spec.StartedBy) and refuses it
	// once that budget is spent, which fails the experiment.
	Budget   workflow.Budgeter
	LeaseTTL time.Duration
	Logger   *zerolog.Logger
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Runner starts, runs, stops and recovers experiments. It owns the
// goroutine of every experiment it runs; Close cancels them and waits.
type Runner struct {
	opts   Options
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	active map[string]activeRun
	// starting makes this instance's starts one at a time, so its count
	// of running experiments and its start are one step here.
	starting sync.Mutex
}

// activeRun is an experiment running here: cancel ends it, done is closed
// once its outcome is stored.
type activeRun struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// New checks opts and returns a Runner.
func New(opts Options) (*Runner, error) {
	var errs []error
	for name, missing := range map[string]bool{
		"Store": opts.Store == nil, "Reads": opts.Reads == nil, "Registry": opts.Registry == nil,
		"Prompts": opts.Prompts == nil, "Model": opts.Model == nil, "Owner": opts.Owner == "",
	} {
		if missing {
			errs = append(errs, fmt.Errorf("opts.%s is required", name))
		}
	}
	if len(errs) > 0 {
		return nil, workflow.WrapKind(workflow.KindInvalid, errors.Join(errs...), "experiments.New")
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency
	}
	if opts.MaxRunning <= 0 {
		opts.MaxRunning = DefaultMaxRunning
	}
	if opts.LeaseTTL <= 0 {
		opts.LeaseTTL = DefaultLeaseTTL
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		nop := zerolog.Nop()
		opts.Logger = &nop
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Runner{opts: opts, ctx: ctx, cancel: cancel, active: map[string]activeRun{}}, nil
}

// Close stops running experiments here (their leases expire and another
// instance finishes them) and waits for their goroutines.
func (r *Runner) Close() {
	r.cancel()
	r.wg.Wait()
}

// Check validates spec as Start does, without starting anything: a
// stage other than stage1 or stage2, a template that does not parse (with
// the stage's key rules) or names no template of the stage, or a model
// override without a way to build one is KindInvalid.
func (r *Runner) Check(spec Spec) error {
	_, err := r.templates(spec)
	if err != nil {
		return err
	}
	if spec.Model != nil && r.opts.OpenModel == nil {
		return workflow.Errorf(workflow.KindInvalid, "model overrides are not available on this gateway")
	}
	return nil
}

func (r *Runner) templates(spec Spec) (map[string]templates.Template, error) {
	if spec.Stage != workflow.StageOne && spec.Stage != workflow.StageTwo {
		return nil, workflow.Errorf(workflow.KindInvalid, "stage must be stage1 or stage2, not %q", spec.Stage)
	}
	out := map[string]templates.Template{}
	for name, source := range spec.Templates {
		if name != string(spec.Stage) {
			return nil, workflow.Errorf(workflow.KindInvalid, "template %q is not used by %s calls: override %q", name, spec.Stage, spec.Stage)
		}
		t, err := templates.Parse(name, source)
		if err != nil {
			return nil, workflow.WrapKind(workflow.KindInvalid, err, "%s", err.Error())
		}
		out[name] = t
	}
	return out, nil
}

// Start checks spec (Check), stores a running experiment and runs it in
// the background; the model override is built before it returns, so a
// model that cannot be built is an error here (KindInvalid). With
// MaxRunning experiments running (in the store) it is KindTooMany, and
// with a Budget, the budget of spec.StartedBy spent is a
// *workflow.BudgetError (KindTooMany too).
func (r *Runner) Start(ctx context.Context, spec Spec) (*Experiment, error) {
	if err := r.Check(spec); err != nil {
		return nil, err
	}
	if r.opts.Budget != nil && spec.StartedBy != "" {
		if err := r.opts.Budget.Check(ctx, spec.StartedBy); err != nil {
			return nil, err
		}
	}
	r.starting.Lock()
	defer r.starting.Unlock()
	running, err := r.opts.Store.RunningExperiments(ctx)
	if err != nil {
		return nil, err
	}
	if len(running) >= r.opts.MaxRunning {
		return nil, workflow.Errorf(workflow.KindTooMany, "%d experiments are running (limit %d); wait for one to end or stop one", len(running), r.opts.MaxRunning)
	}
	model, closeModel, err := r.model(ctx, spec)
	if err != nil {
		return nil, err
	}
	now := r.opts.Now()
	e := &Experiment{ID: workflow.NewID(PrefixExperiment), Status: StatusRunning, Stage: spec.Stage, Spec: spec,
		Calls: []Call{}, CreatedAt: now, UpdatedAt: now}
	if ok, err := r.opts.Store.ClaimExperiment(ctx, e.ID, r.opts.Owner, r.opts.LeaseTTL); err != nil || !ok {
		closeModel()
		return nil, errors.Join(err, errors.New("experiments.Start: lease not taken"))
	}
	if err := r.opts.Store.PutExperiment(ctx, e); err != nil {
		closeModel()
		return nil, err
	}
	r.launch(e, model, closeModel)
	return e, nil
}

// model builds spec's model override, or returns the gateway's.
func (r *Runner) model(ctx context.Context, spec Spec) (workflow.Model, func(), error) {
	if spec.Model == nil {
		return r.opts.Model, func() {}, nil
	}
	m, closeModel, err := r.opts.OpenModel(ctx, *spec.Model)
	if err != nil {
		return nil, nil, workflow.WrapKind(workflow.KindInvalid, err, "model %s/%s cannot be used: %s",
			spec.Model.Provider, spec.Model.Model, workflow.PublicMessage(err))
	}
	return m, closeModel, nil
}

// Get returns a stored experiment.
func (r *Runner) Get(ctx context.Context, id string) (*Experiment, error) {
	return r.opts.Store.GetExperiment(ctx, id)
}

// Stop asks the experiment to stop. Running here, it is cancelled and
// returned as stored stopped (with the calls done); running on another
// instance, that instance stops it within a third of a lease and it is
// returned as it is now. An experiment no longer running is returned as
// it is.
func (r *Runner) Stop(ctx context.Context, id string) (*Experiment, error) {
	e, err := r.opts.Store.GetExperiment(ctx, id)
	if err != nil || e.Status != StatusRunning {
		return e, err
	}
	if err := r.opts.Store.RequestStop(ctx, id); err != nil {
		return nil, err
	}
	r.mu.Lock()
	run, here := r.active[id]
	r.mu.Unlock()
	if !here {
		return e, nil
	}
	run.cancel()
	select {
	case <-run.done:
	case <-ctx.Done():
		return e, nil
	}
	return r.opts.Store.GetExperiment(ctx, id)
}

// Recover takes over every running experiment whose lease expired (its
// instance died) and finishes it here. It returns how many it took.
func (r *Runner) Recover(ctx context.Context) (int, error) {
	ids, err := r.opts.Store.RunningExperiments(ctx)
	if err != nil {
		return 0, err
	}
	taken := 0
	for _, id := range ids {
		r.mu.Lock()
		_, mine := r.active[id]
		r.mu.Unlock()
		if mine {
			continue
		}
		ok, err := r.opts.Store.ClaimExperiment(ctx, id, r.opts.Owner, r.opts.LeaseTTL)
		if err != nil || !ok {
			continue
		}
		e, err := r.opts.Store.GetExperiment(ctx, id)
		if err != nil || e.Status != StatusRunning {
			continue
		}
		model, closeModel, err := r.model(ctx, e.Spec)
		if err != nil {
			e.Status, e.Error = StatusFailed, workflow.PublicMessage(err)
			r.save(ctx, e)
			continue
		}
		r.opts.Logger.Info().Str("experiment", id).Msg("experiment taken over after its lease expired")
		r.launch(e, model, closeModel)
		taken++
	}
	return taken, nil
}

// Watch runs Recover every half lease until ctx ends or the Runner
// closes.
func (r *Runner) Watch(ctx context.Context) {
	t := time.NewTicker(r.opts.LeaseTTL / 2)
	defer t.Stop()
	for {
		if _, err := r.Recover(ctx); err != nil && ctx.Err() == nil {
			r.opts.Logger.Warn().Err(err).Msg("experiments: recovery pass failed")
		}
		select {
		case <-ctx.Done():
			return
		case <-r.ctx.Done():
			return
		case <-t.C:
		}
	}
}

// launch runs e in a goroutine the Runner owns.
func (r *Runner) launch(e *Experiment, model workflow.Model, closeModel func()) {
	ctx, cancel := context.WithCancel(r.ctx)
	run := activeRun{cancel: cancel, done: make(chan struct{})}
	r.mu.Lock()
	r.active[e.ID] = run
	r.mu.Unlock()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer close(run.done)
		defer closeModel()
		defer func() {
			r.mu.Lock()
			delete(r.active, e.ID)
			r.mu.Unlock()
			cancel()
		}()
		r.run(ctx, e, model)
	}()
}

// save stores e with its totals, logging a failure (the next save, or the
// instance that takes the experiment over, writes it again).
func (r *Runner) save(ctx context.Context, e *Experiment) {
	e.Sum()
	e.UpdatedAt = r.opts.Now()
	if err := r.opts.Store.PutExperiment(context.WithoutCancel(ctx), e); err != nil {
		r.opts.Logger.Warn().Err(err).Str("experiment", e.ID).Msg("experiments: saving failed")
	}
}
