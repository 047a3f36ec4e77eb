package wiring

import (
	"context"
	"fmt"

	"github.com/rs/zerolog"

	"github.com/twostep/twostep/actions"
	"github.com/twostep/twostep/experiments"
	"github.com/twostep/twostep/llm"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/redact"
	"github.com/twostep/twostep/workflow"
)

// buildExperiments wires the experiments runner over the store's
// experiment records (both stores keep them), the engine's reads, builder and model; a model
// override is built as a YAML models: entry is. Its leases last
// limits.leaseTTL (0: experiments.DefaultLeaseTTL); each re-runs at most
// limits.experimentConcurrency calls at once, at most
// limits.maxRunningExperiments run at once, and their calls count in the
// budget of the admin who started them.
func (g *Gateway) buildExperiments(cfg Config, log zerolog.Logger, reg *actions.Registry, builder *prompts.Builder, redactor *redact.Redactor, budget workflow.Budgeter) error {
	store := workflow.StoreAs[experiments.Store](g.Store)
	if store == nil {
		return nil
	}
	logger := log.With().Str("component", "experiments").Logger()
	r, err := experiments.New(experiments.Options{
		Store: store, Reads: g.Engine.Admin(), Registry: reg, Prompts: builder, Model: g.Model,
		OpenModel: func(ctx context.Context, ref experiments.ModelRef) (workflow.Model, func(), error) {
			m, err := llm.New(ctx, cfg.llmFor(ModelRef{Provider: ref.Provider, Model: ref.Model}))
			if err != nil {
				return nil, nil, err
			}
			return m, func() { _ = m.Close() }, nil
		},
		Prices: cfg.Prices(), Redactor: redactor, Owner: workflow.NewID("inst_"), Logger: &logger,
		// An experiment's lease lives as long as a round's (limits.leaseTTL).
		LeaseTTL: cfg.File.Limits.LeaseTTL, Concurrency: cfg.File.Limits.ExperimentConcurrency,
		MaxRunning: cfg.File.Limits.MaxRunningExperiments, Budget: budget,
	})
	if err != nil {
		return fmt.Errorf("experiments.New: %w", err)
	}
	g.Experiments = r
	return nil
}
