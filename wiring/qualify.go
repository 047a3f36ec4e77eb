package wiring

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/twostep/twostep/actions"
	"github.com/twostep/twostep/llm"
	"github.com/twostep/twostep/modes/react"
	"github.com/twostep/twostep/qualify"
	"github.com/twostep/twostep/redact"
	"github.com/twostep/twostep/workflow"
)

// QualifyRequest is one `gateway qualify` run: the stage models to try
// ("provider/model", "" for the configured one: the YAML models: routing,
// else LLM_PROVIDER/LLM_MODEL), a cases file ("" for the built-in suite),
// the stage to run ("" for both), the run's bounds and the output form.
type QualifyRequest struct {
	Stage1, Stage2 string
	Cases          string
	Stage          workflow.Stage
	MaxCalls       int
	Concurrency    int
	JSON           bool
}

// Qualify runs req against cfg's models and prints the report to w (text,
// or JSON with req.JSON), redacted as the gateway redacts its traces and
// logs. The models are built as the gateway builds them (the
// environment's keys, endpoints, timeouts and in-flight limit;
// LLM_PROVIDER=scripted gives the offline model), the prompts with the
// configured templates and limits; no store is opened and no action runs.
// A model that answers none of the run's calls is an error, after the
// report is printed.
// An error of kind KindInvalid is the request's (a model name, the cases
// file, a stage without cases): no model was called.
func Qualify(ctx context.Context, cfg Config, req QualifyRequest, w io.Writer) (qualify.Report, error) {
	suite, err := qualify.Builtin()
	if req.Cases != "" {
		suite, err = qualify.ReadFile(req.Cases)
	}
	if err != nil {
		return qualify.Report{}, err
	}
	opts, red, closeModels, err := openQualify(ctx, cfg, req)
	if err != nil {
		return qualify.Report{}, err
	}
	defer closeModels() //nolint:errcheck // nothing is left to do on failure
	opts.MaxCalls, opts.Concurrency = req.MaxCalls, req.Concurrency
	if req.Stage != "" {
		opts.Stages = []workflow.Stage{req.Stage}
	}
	report, err := qualify.Run(ctx, suite, opts)
	if err != nil {
		return report, err
	}
	if err := printReport(w, report, req.JSON, red); err != nil {
		return report, err
	}
	if e := report.Unanswered(); e != "" {
		return report, errors.New(red.String("the model answered no call: " + e))
	}
	return report, nil
}

// openQualify builds the run's options from cfg with req's stage models,
// and the gateway's redactor.
func openQualify(ctx context.Context, cfg Config, req QualifyRequest) (qualify.Options, *redact.Redactor, func() error, error) {
	none := func() error { return nil }
	for _, o := range []struct {
		name string
		ref  **ModelRef
		arg  string
	}{{"--stage1", &cfg.File.Models.Stage1, req.Stage1}, {"--stage2", &cfg.File.Models.Stage2, req.Stage2}} {
		if o.arg == "" {
			continue
		}
		ref, err := ParseModelRef(o.arg)
		if err != nil {
			return qualify.Options{}, nil, none, fmt.Errorf("%s: %w", o.name, err)
		}
		if *o.ref != nil { // keep the entry's maxTokens, temperature and output mode
			ref.MaxTokens, ref.Temperature, ref.OutputMode = (*o.ref).MaxTokens, (*o.ref).Temperature, (*o.ref).OutputMode
		}
		*o.ref = &ref
	}
	if req.Stage2 != "" {
		cfg.LLMModelStage2 = "" // the flag names Stage 2's model
	}
	builder, err := cfg.promptBuilder()
	if err != nil {
		return qualify.Options{}, nil, none, err
	}
	reg, err := actions.New(cfg.Actions, nil, actions.WithSecrets(append(cfg.MCP.Secrets(), cfg.OpenAPI.Secrets()...)...))
	if err != nil {
		return qualify.Options{}, nil, none, fmt.Errorf("actions.New: %w", err)
	}
	red := redact.New(append(reg.Secrets(), cfg.Secrets()...)...)
	grounded, _ := react.ParseGrounded(cfg.File.Stage2.RequireGrounded) // checked by LoadConfig
	opts := qualify.Options{Prompts: builder, Prices: cfg.Prices(), RequireGrounded: grounded}
	if strings.EqualFold(cfg.LLMProvider, llm.ProviderScripted) {
		opts.Model = newOfflineModel()
		return opts, red, none, nil
	}
	r, closeModels, err := openRouter(ctx, cfg)
	if err != nil {
		return qualify.Options{}, nil, none, err
	}
	opts.Model = r
	return opts, red, closeModels, nil
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

// printReport writes r as text or, with asJSON, as one JSON document,
// redacted by red.
func printReport(w io.Writer, r qualify.Report, asJSON bool, red *redact.Redactor) error {
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
	_, err := w.Write(red.Bytes(b.Bytes()))
	return err
}
