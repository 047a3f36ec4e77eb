package qualify

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twostep/twostep/economy"
	"github.com/twostep/twostep/modes/react"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/templates"
	"github.com/twostep/twostep/workflow"
)

// MaxRetries is how many times a rejected reply is asked again with its
// problems as feedback, as the React mode does (react.MaxRetries).
const MaxRetries = 2

// DefaultConcurrency is how many cases run at once when Options sets none.
const DefaultConcurrency = 4

// Options configures a run.
type Options struct {
	// Model answers both stages (an llm.Router sends each stage's calls
	// to its configured model); the adapter's own timeouts, retries and
	// in-flight limit bound every call.
	Model workflow.Model
	// Prompts renders the prompts and parses the replies, as the modes do.
	Prompts *prompts.Builder
	// Prices prices each call by the model that answered (the YAML
	// prices: table); a model without a price has no cost.
	Prices economy.Prices
	// Stages are the stages to run (empty: both).
	Stages []workflow.Stage
	// MaxCalls bounds the model calls of the whole run; 0 means the most
	// the suite can make (every case's first try and retries). A case
	// whose next call would pass it stops there and does not pass.
	MaxCalls int
	// Concurrency is how many cases run at once (0: DefaultConcurrency).
	Concurrency int
	// RequireGrounded is the YAML stage2.requireGrounded: which Stage 2
	// replies an ungrounded value rejects, with feedback and the usual
	// retries, as a round does ("" counts them and rejects none).
	RequireGrounded react.Grounded
}

// Run runs every case of the selected stages against opts.Model and
// scores them; a stage without cases is left out of the report. Nothing
// is stored and no action is executed. It returns an error only when ctx
// is cancelled or no case is of the stages asked (KindInvalid); a model
// that fails is a case that fails, with the error in its result.
func Run(ctx context.Context, s Suite, opts Options) (Report, error) {
	if opts.Model == nil || opts.Prompts == nil {
		return Report{}, workflow.Errorf(workflow.KindInternal, "qualify.Run needs a model and a prompt builder")
	}
	stages := opts.Stages
	if len(stages) == 0 {
		stages = []workflow.Stage{workflow.StageOne, workflow.StageTwo}
	}
	var cases []Prepared
	var run []workflow.Stage // the stages with cases
	for _, st := range stages {
		if sc := s.Stage(st); len(sc) > 0 {
			cases, run = append(cases, sc...), append(run, st)
		}
	}
	if len(cases) == 0 {
		return Report{}, workflow.Errorf(workflow.KindInvalid, "the suite has no case of %v", stages)
	}
	limit := opts.MaxCalls
	if limit <= 0 {
		limit = len(cases) * (1 + MaxRetries)
	}
	r := &runner{opts: opts}
	r.left.Store(int64(limit))
	results := r.all(ctx, cases)
	if err := ctx.Err(); err != nil {
		return Report{}, err
	}
	return newReport(run, results, limit), nil
}

// all runs cases on Options.Concurrency workers, which take them in
// suite order and each write their case's slot; a case not started when
// ctx ends is not run.
func (r *runner) all(ctx context.Context, cases []Prepared) []CaseResult {
	results := make([]CaseResult, len(cases))
	n := r.opts.Concurrency
	if n <= 0 {
		n = DefaultConcurrency
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(n, len(cases)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i] = r.run(ctx, cases[i])
			}
		}()
	}
	for i := range cases {
		select {
		case next <- i:
		case <-ctx.Done():
			results[i] = notRun(cases[i], "the run was cancelled")
		}
	}
	close(next)
	wg.Wait()
	return results
}

// runner is one run's shared state: the options, the calls left, and the
// calls answered and failed so far.
type runner struct {
	opts             Options
	left             atomic.Int64
	answered, failed atomic.Int64
}

// deadAfter is how many failed calls, with none answered, stop a run from
// starting more cases: a model that cannot answer (a wrong key, an
// endpoint down) would otherwise cost every case its retries and backoff.
const deadAfter = 3

// dead reports whether the model has failed deadAfter calls and answered
// none.
func (r *runner) dead() bool { return r.answered.Load() == 0 && r.failed.Load() >= deadAfter }

// take reserves one model call; false when the run's calls are spent.
func (r *runner) take() bool { return r.left.Add(-1) >= 0 }

// run runs one case.
func (r *runner) run(ctx context.Context, c Prepared) CaseResult {
	if r.dead() {
		return notRun(c, "the model answered none of the run's first calls")
	}
	if c.Stage == workflow.StageOne {
		return r.stage1(ctx, c)
	}
	return r.stage2(ctx, c)
}

// notRun is the result of a case that made no call.
func notRun(c Prepared, why string) CaseResult {
	return CaseResult{ID: c.ID, Stage: c.Stage, Situation: c.Situation, Stopped: why}
}

// generate makes one call of the case and records it in res; the reply is
// returned with the model's error, if any.
func (r *runner) generate(ctx context.Context, req workflow.ModelRequest, res *CaseResult) (workflow.ModelResponse, error) {
	start := time.Now()
	resp, err := r.opts.Model.Generate(ctx, req)
	c := Call{LatencyMs: time.Since(start).Milliseconds(), Model: resp.Model,
		Tokens: Tokens{Input: resp.PromptTokens, Cached: resp.CachedTokens, Output: resp.CompletionTokens}}
	if p, ok := r.opts.Prices[resp.Model]; ok {
		usd := p.USD(c.Tokens.economy())
		c.USD = &usd
	}
	if err != nil {
		c.Error = workflow.PublicMessage(err)
		r.failed.Add(1)
	} else {
		r.answered.Add(1)
	}
	c.Truncated = err == nil && resp.Truncated
	res.Calls = append(res.Calls, c)
	return resp, err
}

// templateOutput is the template output for a call sent in mode: a native
// mode gives the provider the reply's shape, so the prompt leaves it out.
func templateOutput(mode workflow.OutputMode) templates.Output {
	if mode.Native() {
		return templates.NativeOutput
	}
	return templates.TextOutput
}
