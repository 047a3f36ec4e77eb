// Package qualify tells whether a model can be Stage 1 or Stage 2
// (DESIGN §11.5, docs/qualify.md): it runs a suite of cases through the
// real templates, output modes and parsers (prompts.Builder,
// prompts.ParseStage1, Builder.ParseStage2, the grounding check) against
// a workflow.Model and scores each reply against the case's expectations.
//
// A run is bounded (Options.MaxCalls, Options.Concurrency, the model's
// own timeouts), stores nothing and executes no action: each case's
// catalogue only validates parameters. The built-in suite (Builtin) is
// embedded from cases/*.jsonl and catalogues.json.
package qualify
