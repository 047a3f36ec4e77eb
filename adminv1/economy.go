package adminv1

// EconomyView is the economy report as the admin route shows it (DESIGN
// §10.1).
type EconomyView struct {
	Steps     []EconomyStep `json:"steps" nullable:"false" doc:"The steps with a Stage 1 or Stage 2 trace, in order"`
	Totals    EconomyCost   `json:"totals" doc:"Every kept model call but the actions' own: Stage 1, Stage 2, plan, repair, compaction"`
	PlainLoop EconomyCost   `json:"plainLoop" doc:"The same steps as the plain tool-calling loop would have sent them (one call per step, the actions as tools, an append-only transcript of tool calls and results), its prefix cached by the same rule"`
	CostRatio float64       `json:"costRatio" doc:"totals ÷ plainLoop in dollars when both are priced, else in equivalent tokens (uncached input + 0.1 × cached + 5 × output); 0 without a plain loop"`
}

// EconomyStep is one step's usage by stage.
type EconomyStep struct {
	Round         int           `json:"round"`
	Step          int           `json:"step"`
	Stage1        EconomyTokens `json:"stage1" doc:"The step's Stage 1 calls, retries included"`
	Stage2        EconomyTokens `json:"stage2" doc:"The step's Stage 2 calls, retries included"`
	Stage2Skipped bool          `json:"stage2Skipped" doc:"The step made no Stage 2 call (nothing to fill, or Stage 1 failed)"`
	Discarded     int           `json:"discarded" doc:"The step's early Stage 2 calls whose reply was not used (design §11.2); their tokens are in stage2"`
	LatencyMs     int64         `json:"latencyMs" doc:"The step's model time measured: from the start of its first call to the end of its last (an early Stage 2 overlaps its Stage 1)"`
}

// EconomyTokens is the usage of some model calls.
type EconomyTokens struct {
	Input  int `json:"input" doc:"Prompt tokens, cached ones included"`
	Cached int `json:"cached" doc:"Prompt tokens served from the provider's prompt cache: as the provider reported them, else modelled"`
	Output int `json:"output" doc:"Completion tokens"`
}

// EconomyCost is a usage and, when every call it sums has a price, its cost.
type EconomyCost struct {
	Input  int      `json:"input" doc:"Prompt tokens, cached ones included"`
	Cached int      `json:"cached" doc:"Prompt tokens served from the provider's prompt cache"`
	Output int      `json:"output" doc:"Completion tokens"`
	USD    *float64 `json:"usd,omitempty" doc:"US dollars at the configured prices (YAML prices); absent when a model has no price"`
}
