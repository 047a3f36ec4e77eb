package wiring

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/twostep/twostep/actions"
	"github.com/twostep/twostep/llm"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/qualify"
	"github.com/twostep/twostep/redact"
	"github.com/twostep/twostep/templates"
	"github.com/twostep/twostep/workflow"
)

// QualifyModels names the models `gateway qualify` tries: "provider/model"
// for a stage, or "" for the stage's configured model (the YAML models:
// routing, else LLM_PROVIDER/LLM_MODEL).
type QualifyModels struct {
	Stage1, Stage2 string
}

// Qualifier is what a qualification run needs from the configuration:
// the run's options (the models routed per stage, the builder over the
// configured templates, the prices) and the gateway's redactor for what
// it prints. Close releases the models.
type Qualifier struct {
	Options  qualify.Options
	Redactor *redact.Redactor
	Close    func() error
}

// OpenQualifier builds a qualification run from cfg with models' stage
// overrides. The models are built as the gateway builds them (each
// adapter with the environment's keys, endpoints, timeouts and in-flight
// limit; LLM_PROVIDER=scripted gives the offline model); no store is
// opened.
func OpenQualifier(ctx context.Context, cfg Config, models QualifyModels) (Qualifier, error) {
	for _, o := range []struct {
		name string
		ref  **ModelRef
		arg  string
	}{{"--stage1", &cfg.File.Models.Stage1, models.Stage1}, {"--stage2", &cfg.File.Models.Stage2, models.Stage2}} {
		if o.arg == "" {
			continue
		}
		ref, err := ParseModelRef(o.arg)
		if err != nil {
			return Qualifier{}, fmt.Errorf("%s: %w", o.name, err)
		}
		if *o.ref != nil { // keep the entry's maxTokens, temperature and output mode
			ref.MaxTokens, ref.Temperature, ref.OutputMode = (*o.ref).MaxTokens, (*o.ref).Temperature, (*o.ref).OutputMode
		}
		*o.ref = &ref
	}
	if models.Stage2 != "" {
		cfg.LLMModelStage2 = "" // the flag names Stage 2's model
	}
	builder, err := cfg.promptBuilder()
	if err != nil {
		return Qualifier{}, err
	}
	reg, err := actions.New(cfg.Actions, nil, actions.WithSecrets(append(cfg.MCP.Secrets(), cfg.OpenAPI.Secrets()...)...))
	if err != nil {
		return Qualifier{}, fmt.Errorf("actions.New: %w", err)
	}
	q := Qualifier{Options: qualify.Options{Prompts: builder, Prices: cfg.Prices()},
		Redactor: redact.New(append(reg.Secrets(), cfg.Secrets()...)...), Close: func() error { return nil }}
	if strings.EqualFold(cfg.LLMProvider, llm.ProviderScripted) {
		q.Options.Model = newOfflineModel()
		return q, nil
	}
	r, closeModels, err := openRouter(ctx, cfg)
	if err != nil {
		return Qualifier{}, err
	}
	q.Options.Model, q.Close = r, closeModels
	return q, nil
}

// ParseModelRef reads "provider/model" (the model may hold more slashes,
// as OpenRouter's names do).
func ParseModelRef(s string) (ModelRef, error) {
	provider, model, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok || provider == "" || model == "" {
		return ModelRef{}, workflow.Errorf(workflow.KindInvalid, "want provider/model (for example openai/gpt-4.1-nano), got %q", s)
	}
	return ModelRef{Provider: strings.ToLower(provider), Model: model}, nil
}

// promptBuilder is the builder over the configured templates and limits,
// as the gateway's modes render with it.
func (c *Config) promptBuilder() (*prompts.Builder, error) {
	set, err := templates.Load(c.File.Templates.OverrideDir)
	if err != nil {
		return nil, fmt.Errorf("templates.Load: %w", err)
	}
	l := c.File.Limits
	return prompts.NewBuilder(set, prompts.Options{HistoryBudget: l.HistoryBudget, LoopRepeats: l.loopRepeats(),
		NoCompaction: l.Compaction != nil && !*l.Compaction}), nil
}

// Print writes r as text or, with asJSON, as one JSON document, redacted
// as the gateway redacts its traces and logs.
func (q Qualifier) Print(w io.Writer, r qualify.Report, asJSON bool) error {
	var b bytes.Buffer
	if asJSON {
		enc := json.NewEncoder(&b)
		enc.SetIndent("", "  ")
		if err := enc.Encode(r); err != nil {
			return err
		}
	} else if err := r.WriteText(&b); err != nil {
		return err
	}
	_, err := w.Write(q.Redactor.Bytes(b.Bytes()))
	return err
}
