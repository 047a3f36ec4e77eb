package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/modes/react"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/redact"
	"github.com/twostep/twostep/templates"
	"github.com/twostep/twostep/workflow"
)

// twostepUser owns every benchmark workflow.
const twostepUser = "bench"

// Twostep runs the task as a twostep React round: the engine with the React
// mode and the embedded prompt templates, over a store, as the gateway wires
// them. Per step it renders and parses Stage 1 and Stage 2 (two model
// calls), validates the parameters, runs the action and persists three
// commits (two checkpoints and the step) and three traces (the two calls
// and the action), every trace redacted; the final answer is a step of its
// own (two calls, two commits, two traces).
type Twostep struct {
	engine *engine.Engine
	store  *releases
	log    *echoLog
	task   Task
	calls  atomic.Int64
	// compactions counts history compaction calls (stage compact, made
	// when a long round's history outgrows its budget): answered with a
	// fixed summary, outside the task's scripted calls.
	compactions atomic.Int64
	before      int64  // calls before the last run
	last        string // the last run's workflow id
	// wrap, when set, wraps the engine's mode (labelSteps).
	wrap func(workflow.Mode) workflow.Mode
}

// option configures a Twostep system before its engine starts.
type option func(*Twostep)

// twostepScript is the model's reply to each call of a run, in order.
func twostepScript(task Task) []string {
	var out []string
	for i := 1; i <= task.Calls; i++ {
		text := ToolInput(i)
		out = append(out,
			enginetest.Select(EchoAction, "echo "+text, nil, "", "text"),
			enginetest.Params(map[string]any{"text": text}))
	}
	return append(out, enginetest.Completes(Answer)...)
}

// benchHistoryBudget is the history budget of the side-by-side systems:
// the default before issue 34, under which the task never compacts.
const benchHistoryBudget = 12000

// NewTwostep starts a twostep engine with the React mode over store, its
// model scripted for task.
func NewTwostep(store workflow.Store, task Task, opts ...option) (*Twostep, error) {
	set, err := templates.Load("")
	if err != nil {
		return nil, fmt.Errorf("templates.Load: %w", err)
	}
	// The side-by-side systems make the same model calls: at the default
	// history budget (2,000 characters since issue 34) the task's round
	// would compact once, a call and a commit no other system makes, so
	// the bench keeps the budget its figures were measured with. The cost
	// comparison (cost.go) runs at the default.
	mode := react.New(prompts.NewBuilder(set, prompts.Options{HistoryBudget: benchHistoryBudget}))
	t := &Twostep{store: gatewayStore(store), log: &echoLog{}, task: task}
	for _, o := range opts {
		o(t)
	}
	script := twostepScript(task)
	model := workflow.ModelFunc(func(ctx context.Context, req workflow.ModelRequest) (workflow.ModelResponse, error) {
		if req.Stage == workflow.StageCompact {
			t.compactions.Add(1)
			return workflow.ModelResponse{Text: "Earlier steps echoed their inputs in order; all succeeded.", Model: "fake",
				PromptTokens: 100, CompletionTokens: 10}, nil
		}
		n := t.calls.Add(1) - 1
		return workflow.ModelResponse{Text: script[n%int64(len(script))], Model: "fake", PromptTokens: 100, CompletionTokens: 10}, nil
	})
	if err := t.start(model, map[workflow.ModeName]workflow.Mode{workflow.ModeReact: mode}); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *Twostep) start(model workflow.Model, modes map[workflow.ModeName]workflow.Mode) error {
	reg, err := newRegistry(t.log)
	if err != nil {
		return err
	}
	// Production intervals (the defaults), so background polling costs
	// what it costs in the gateway.
	if t.wrap != nil {
		for name, m := range modes {
			modes[name] = t.wrap(m)
		}
	}
	cfg := engine.Config{InstanceID: "bench", MaxStepsLimit: max(engine.DefaultMaxStepsLimit, t.task.Steps())}
	if t.engine, err = engine.New(cfg, t.store, model, reg, modes); err != nil {
		return err
	}
	t.engine.Start(context.Background())
	return nil
}

// Run creates a workflow with the task's prompt and returns when the
// engine released the round's lease: the last store call of a round run,
// after its last commit. (A wait over the change service would re-read the
// workflow after every commit; a client is told the end by an event instead.)
func (t *Twostep) Run(ctx context.Context) error {
	t.before = t.calls.Load()
	t.log.take() // the log holds this run's calls only, Result taken or not
	wf, err := t.engine.Create(ctx, engine.NewWorkflow{
		UserID: twostepUser, Prompt: Prompt, Mode: workflow.ModeReact, MaxSteps: t.task.Steps(),
	})
	if err != nil {
		return err
	}
	t.last = wf.ID
	select {
	case <-t.store.released(wf.ID):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Result reads the last run's workflow and messages: the round must have
// completed, and its last message is the final answer.
func (t *Twostep) Result(ctx context.Context) (Result, error) {
	res := Result{Inputs: t.log.take(), ModelCalls: int(t.calls.Load() - t.before)}
	wf, err := t.store.GetWorkflow(ctx, t.last)
	if err != nil {
		return res, err
	}
	if wf.Status != workflow.StatusCompleted {
		return res, fmt.Errorf("round ended %s (%s): %s", wf.Status, wf.StopReason, wf.Error)
	}
	msgs, err := t.store.Messages(ctx, t.last, 0, 0)
	if err != nil {
		return res, err
	}
	if len(msgs) > 0 && msgs[len(msgs)-1].Role == workflow.RoleAssistant {
		res.Answer = msgs[len(msgs)-1].Text
	}
	traces, err := t.store.Traces(ctx, t.last)
	res.Commits, res.Traces = int(wf.Version), len(traces)
	return res, err
}

// Forget deletes the last run's workflow.
func (t *Twostep) Forget(ctx context.Context) error {
	if t.last == "" {
		return nil
	}
	id := t.last
	t.last = ""
	t.store.forget(id)
	return t.engine.Delete(ctx, twostepUser, id)
}

// Close shuts the engine down.
func (t *Twostep) Close(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return t.engine.Shutdown(ctx)
}

// modelKey stands for the model provider's API key: the gateway's
// redactor always holds at least that secret, so every trace is scanned.
const modelKey = "sk-bench-4f3c2a1b9e8d7c6b5a49382716"

// gatewayStore wraps store as the gateway does (every trace redacted, with
// the secrets of the configuration) and so that Run sees a lease released.
func gatewayStore(store workflow.Store) *releases {
	return newReleases(redact.Traces(store, redact.New(modelKey)))
}

// releases wraps a store to tell when a round's lease is released, and
// marks the end of each step on its step clock.
type releases struct {
	workflow.Store
	mu    sync.Mutex
	done  map[string]chan struct{}
	steps stepClock
}

func newReleases(s workflow.Store) *releases {
	return &releases{Store: s, done: map[string]chan struct{}{}}
}

// ClaimRoundLoad forwards to the wrapped store, so the engine claims a
// round and reads it in one step, as in the gateway (workflow.RoundLoader).
func (r *releases) ClaimRoundLoad(ctx context.Context, id, owner string, ttl time.Duration) (workflow.RoundClaim, error) {
	return workflow.ClaimRoundLoad(ctx, r.Store, id, owner, ttl)
}

// ReleaseRound releases the lease, then closes id's channel.
func (r *releases) ReleaseRound(ctx context.Context, id, owner string) error {
	err := r.Store.ReleaseRound(ctx, id, owner)
	ch := r.released(id)
	r.mu.Lock()
	select {
	case <-ch:
	default:
		close(ch)
	}
	r.mu.Unlock()
	return err
}

// released returns the channel closed when id's lease is released.
func (r *releases) released(id string) chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	ch, ok := r.done[id]
	if !ok {
		ch = make(chan struct{})
		r.done[id] = ch
	}
	return ch
}

// forget drops id's channel.
func (r *releases) forget(id string) {
	r.mu.Lock()
	delete(r.done, id)
	r.mu.Unlock()
}
