package engine

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/sync/semaphore"

	"github.com/twostep/twostep/workflow"
)

// Defaults of Config.
const (
	DefaultMaxSteps          = 10
	DefaultMaxStepsLimit     = 100
	DefaultWorkers           = 8
	DefaultMaxRunningPerUser = 4
	// DefaultMaxQueuedPerUser bounds a user's queued rounds over all
	// their workflows (each also holds at most workflow.MaxQueuedRounds).
	DefaultMaxQueuedPerUser = 50
	// DefaultMaxForkBytes bounds the document bytes one fork copies.
	DefaultMaxForkBytes = 16 << 20
	// forkBytesInFlight is how many MaxForkBytes the forks of one
	// instance may hold in memory at once.
	forkBytesInFlight      = 4
	DefaultLeaseTTL        = 10 * time.Second
	DefaultRecoverInterval = time.Second
	DefaultPollInterval    = time.Second
	DefaultShutdownGrace   = 20 * time.Second
	// MaxFailuresInARow is the breaker: this many failed steps in a row end
	// the round with status failed and stop reason failures.
	MaxFailuresInARow = 3
)

// Dispatch defaults of Config.
const (
	// DefaultDispatchRecoverInterval is the recovery scan's interval when
	// rounds are dispatched through a shared Dispatcher, which covers the
	// normal path: the scan is then only the safety net for a round whose
	// entry was never written (the store failed between commit and
	// enqueue).
	DefaultDispatchRecoverInterval = 10 * time.Second
	DefaultReclaimInterval         = time.Second
)

// Config configures an Engine. Zero values take the defaults above.
type Config struct {
	// DefaultMaxSteps is a new workflow's maxSteps when the request names
	// none; MaxStepsLimit is the largest maxSteps a request may ask for.
	DefaultMaxSteps int
	MaxStepsLimit   int
	// Workers bounds how many rounds this instance runs at once.
	Workers int
	// MaxRunningPerUser bounds a user's running rounds (over every
	// instance); beyond it Create, StartRound and Resume fail with
	// KindTooMany.
	MaxRunningPerUser int
	// MaxQueuedPerUser bounds a user's queued rounds (onBusy=enqueue or
	// interrupt) over all their workflows; one more is KindTooMany. It is
	// checked before the queueing commit, so requests racing each other
	// may pass it by the few in flight.
	MaxQueuedPerUser int
	// MaxForkBytes bounds the bytes of documents one fork copies (its
	// kept messages' documents, summed from their sizes before any is
	// read); a bigger fork is KindInvalid. The forks of one instance hold
	// at most 4 × MaxForkBytes of documents in memory at once; more wait.
	MaxForkBytes int64
	// LeaseTTL is how long a claimed round stays this instance's without a
	// renewal (at least a millisecond); leases are renewed every LeaseTTL/3
	// while the round runs.
	LeaseTTL time.Duration
	// Dispatcher hands accepted rounds to the workers of every instance
	// (nil: a LocalDispatcher of this engine alone). Instances sharing a
	// store share one.
	Dispatcher workflow.Dispatcher
	// ReclaimInterval is how often idle workers take over dispatched
	// rounds whose consumer left them untouched for LeaseTTL (it died): a
	// round whose instance died is taken over within LeaseTTL +
	// ReclaimInterval.
	ReclaimInterval time.Duration
	// RecoverInterval is how often the engine looks for running workflows
	// that no instance runs (an expired lease) and resumes them: the safety
	// net for rounds that never got a dispatcher entry. Default: 1s with
	// the local dispatcher, DefaultDispatchRecoverInterval with a
	// configured one.
	RecoverInterval time.Duration
	// PollInterval is how often a running round re-reads its status, so a
	// Stop made on another instance cancels the in-flight model call.
	PollInterval time.Duration
	// Approvals decides which calls wait for a person's approval (nil:
	// none); ApprovalTimeout is how long one waits before it is rejected
	// as expired (0: DefaultApprovalTimeout).
	Approvals       workflow.ApprovalPolicy
	ApprovalTimeout time.Duration
	// Now is the engine's clock (time.Now by default); tests move it to
	// expire approvals.
	Now func() time.Time
	// LoopRepeats ends a round with StopLoop when a step repeats an earlier
	// one of the round (same action, parameters and result; Fingerprint)
	// this many times; the repeat before warns the model. 0 means
	// DefaultLoopRepeats, a negative value turns detection off.
	LoopRepeats int
	// ShutdownGrace is how long Shutdown lets the phases in flight (model
	// calls, actions) finish and commit before it cancels them.
	ShutdownGrace time.Duration
	// InstanceID names this instance as the owner of its leases; empty means
	// a fresh random id.
	InstanceID string
	// Logger receives operational logs; the zero Logger discards them.
	Logger zerolog.Logger
	// Observer receives metrics hooks; nil means none.
	Observer Observer
	// Changes hears of every commit this engine makes (Change); nil means
	// nobody in this process watches.
	Changes workflow.Changes
	// Deltas hears the streamed pieces of stage replies (DESIGN §11.3);
	// nil means nobody watches them.
	Deltas workflow.Deltas
	// Budget limits each user's model usage (DESIGN §10.3); nil means
	// none.
	Budget workflow.Budgeter
	// Webhooks decides the webhook deliveries of each round that ends or
	// pauses (DESIGN §10.3); nil means none.
	Webhooks workflow.WebhookSource
	// Tracer opens the spans of rounds, steps, model calls, actions and
	// commits (DESIGN §9.5); nil means none.
	Tracer workflow.Tracer
}

// Observer receives the engine's events, for metrics. Its methods are
// called synchronously from the goroutine running a round (or calling
// Stop), so they must be fast and safe for concurrent use.
type Observer interface {
	// RoundEnded is called once a round has ended (any status but running).
	RoundEnded(wf *workflow.Workflow)
	// StepFinished is called when a step committed.
	StepFinished(mode workflow.ModeName, action string, status workflow.MessageStatus, d time.Duration)
	// ModelCalled is called after every model call; outcome is "ok",
	// "rejected", "error" or "cancelled".
	ModelCalled(stage workflow.Stage, outcome string, promptTokens, completionTokens int)
	ApprovalObserver
	workflow.DispatchObserver
}

// Engine runs workflows: it validates and commits requests (Create,
// StartRound, Stop, Resume, Delete) and runs rounds in the background on a
// bounded pool of workers, one step phase at a time, every phase persisted
// with Store.Commit under the version check. Several engines (gateway
// instances) may share one store: a round runs on the instance holding its
// lease, and a round whose instance died is resumed by another one.
//
// An Engine is safe for concurrent use. Start must be called once before
// rounds run here; Shutdown stops it. Before Start and after Shutdown the
// request methods still commit, and their rounds wait in the store for an
// instance that runs them (this one after Start, or any other).
type Engine struct {
	cfg      Config
	store    workflow.Store
	model    workflow.Model
	registry workflow.Registry
	modes    map[workflow.ModeName]workflow.Mode
	log      zerolog.Logger
	now      func() time.Time

	runner *runner

	// approvals is the store's approval index, when it keeps one (taken
	// before a tracing wrapper hides it).
	approvals workflow.ApprovalIndex
	// standing keeps the standing approvals, when the store does.
	standing workflow.StandingStore

	// changes hears of every commit (cfg.Changes, or nobody).
	changes workflow.Changes
	// outputs learns what each stage's replies write, for the output a
	// call without maxTokens reserves in the budget.
	outputs outputBounds
	// forkBytes bounds the document bytes forks hold in memory at once.
	forkBytes *semaphore.Weighted
}

// New returns an engine over store, model and registry running the
// given modes. It fails with KindInvalid when a dependency is missing or
// the configuration is inconsistent.
func New(cfg Config, store workflow.Store, model workflow.Model, registry workflow.Registry, modes map[workflow.ModeName]workflow.Mode) (*Engine, error) {
	if store == nil || model == nil || registry == nil {
		return nil, workflow.Errorf(workflow.KindInvalid, "engine.New: store, model and registry are required")
	}
	if modes[workflow.ModeReact] == nil && modes[workflow.ModeActionPlan] == nil {
		return nil, workflow.Errorf(workflow.KindInvalid, "engine.New: no mode to run")
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	e := &Engine{
		cfg:       cfg,
		store:     store,
		model:     model,
		registry:  registry,
		modes:     modes,
		log:       cfg.Logger.With().Str("instance", cfg.InstanceID).Logger(),
		now:       cfg.clock(),
		changes:   cfg.Changes,
		forkBytes: semaphore.NewWeighted(forkBytesInFlight * cfg.MaxForkBytes),
	}
	if e.changes == nil {
		e.changes = noChanges{}
	}
	e.approvals = workflow.StoreAs[workflow.ApprovalIndex](store)
	e.standing = workflow.StoreAs[workflow.StandingStore](store)
	if cfg.Tracer != nil {
		e.store, e.registry = tracedStore{Store: store, e: e}, tracedRegistry{Registry: registry, e: e}
	}
	e.runner = newRunner(e)
	return e, nil
}

func (c Config) withDefaults() (Config, error) {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.DefaultMaxSteps, DefaultMaxSteps)
	def(&c.MaxStepsLimit, DefaultMaxStepsLimit)
	def(&c.Workers, DefaultWorkers)
	def(&c.MaxRunningPerUser, DefaultMaxRunningPerUser)
	def(&c.MaxQueuedPerUser, DefaultMaxQueuedPerUser)
	if c.MaxForkBytes == 0 {
		c.MaxForkBytes = DefaultMaxForkBytes
	}
	defDur := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	defDur(&c.LeaseTTL, DefaultLeaseTTL)
	if c.Dispatcher == nil {
		c.Dispatcher = NewLocalDispatcher()
		defDur(&c.RecoverInterval, DefaultRecoverInterval)
	} else {
		defDur(&c.RecoverInterval, DefaultDispatchRecoverInterval)
	}
	defDur(&c.ReclaimInterval, DefaultReclaimInterval)
	defDur(&c.PollInterval, DefaultPollInterval)
	defDur(&c.ShutdownGrace, DefaultShutdownGrace)
	if c.InstanceID == "" {
		host, _ := os.Hostname()
		c.InstanceID = host + "-" + workflow.NewID("")
	}
	var errs []error
	if c.DefaultMaxSteps < 1 || c.DefaultMaxSteps > c.MaxStepsLimit {
		errs = append(errs, errors.New("config: DefaultMaxSteps must be between 1 and MaxStepsLimit"))
	}
	if c.Workers < 1 || c.MaxRunningPerUser < 1 || c.MaxQueuedPerUser < 1 || c.MaxForkBytes < 1 {
		errs = append(errs, errors.New("config: Workers, MaxRunningPerUser, MaxQueuedPerUser and MaxForkBytes must be positive"))
	}
	if c.LeaseTTL < 0 || c.RecoverInterval < 0 || c.ReclaimInterval < 0 || c.PollInterval < 0 || c.ShutdownGrace < 0 {
		errs = append(errs, errors.New("durations must be positive"))
	}
	if c.LeaseTTL > 0 && c.LeaseTTL < time.Millisecond {
		// Leases are renewed every LeaseTTL/3 and stores count them in
		// milliseconds.
		errs = append(errs, errors.New("LeaseTTL must be at least a millisecond"))
	}
	if err := errors.Join(errs...); err != nil {
		return c, workflow.WrapKind(workflow.KindInvalid, err, "engine.New: bad configuration")
	}
	return c, nil
}

// Start starts the workers, the dispatcher's readers and the reclaim and
// recovery loops. They run until ctx is
// cancelled or Shutdown is called; the engine owns and waits for them.
func (e *Engine) Start(ctx context.Context) { e.runner.start(ctx) }

// Shutdown stops taking rounds and lets each running one finish the phase
// in flight (its model call or action) and commit it, for up to
// ShutdownGrace (or until ctx is done); then it cancels what is left at its
// current checkpoint. Rounds keep status running (this or another instance
// resumes them), their leases are released, and Shutdown waits for the
// workers until ctx is done.
func (e *Engine) Shutdown(ctx context.Context) error { return e.runner.shutdown(ctx) }

// notify publishes a commit of workflow id that ended no round.
func (e *Engine) notify(id string) { e.changes.Publish(workflow.Change{WorkflowID: id}) }

// roundEnded tells the Observer and the watchers of w that its round has
// ended (w as it ended), with msgs, the workflow's messages when the
// round's run holds them (nil otherwise).
func (e *Engine) roundEnded(w *workflow.Workflow, msgs []workflow.Message) {
	e.observer().RoundEnded(w)
	e.changes.Publish(workflow.Change{WorkflowID: w.ID, Ended: w, Messages: msgs})
}

// observer returns the configured Observer or one that does nothing.
func (e *Engine) observer() Observer {
	if e.cfg.Observer != nil {
		return e.cfg.Observer
	}
	return noObserver{}
}

type noObserver struct{}

func (noObserver) RoundEnded(*workflow.Workflow)                                                 {}
func (noObserver) StepFinished(workflow.ModeName, string, workflow.MessageStatus, time.Duration) {}
func (noObserver) ModelCalled(workflow.Stage, string, int, int)                                  {}
func (noObserver) ApprovalRequested(string)                                                      {}
func (noObserver) ApprovalDecided(string, time.Duration)                                         {}
func (noObserver) Dispatched(string)                                                             {}

// clock returns the configured clock, or UTC wall time.
func (c Config) clock() func() time.Time {
	if c.Now != nil {
		return c.Now
	}
	return func() time.Time { return time.Now().UTC() }
}
