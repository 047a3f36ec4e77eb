package wiring

import (
	"context"
	"errors"
	"fmt"

	"github.com/twostep/twostep/llm"
	"github.com/twostep/twostep/workflow"
)

// ModelRef is one model of the YAML `models:` section. An empty provider is
// LLM_PROVIDER's; the keys and endpoints are always the environment's.
type ModelRef struct {
	Provider string `yaml:"provider"`
	Model    string `yaml:"model"`
	// MaxTokens is sent when a call sets none (0: the provider's default).
	MaxTokens int `yaml:"maxTokens"`
	// Temperature is the stage's sampling temperature, 0 to 2 (unset: the
	// provider's default; a fallback without one uses the stage's).
	Temperature *float64 `yaml:"temperature"`
	// OutputMode overrides how the entry's stage calls ask for their
	// reply: tool, json_schema, json_object or text (unset: LLM_OUTPUT_MODE,
	// else the provider's default).
	OutputMode workflow.OutputMode `yaml:"outputMode"`
}

// FileModels is the YAML `models:` section (DESIGN §9.2): the model of each
// stage (unset stages use LLM_PROVIDER/LLM_MODEL) and the fallbacks tried in
// order when a call still fails after its retries.
type FileModels struct {
	Stage1 *ModelRef `yaml:"stage1"`
	Stage2 *ModelRef `yaml:"stage2"`
	Plan   *ModelRef `yaml:"plan"`
	Action *ModelRef `yaml:"action"`
	// Compact is React mode's history compaction call (unset: stage1's).
	Compact  *ModelRef  `yaml:"compact"`
	Fallback []ModelRef `yaml:"fallback"`
}

// routed reports whether anything beyond the default model is configured.
func (c *Config) routed() bool {
	m := c.File.Models
	return c.LLMModelStage2 != "" || m.Stage1 != nil || m.Stage2 != nil || m.Plan != nil || m.Action != nil || m.Compact != nil || len(m.Fallback) > 0
}

// stageModels returns the configured model of each stage that has one;
// LLM_MODEL_STAGE2 names Stage 2's model (on the YAML stage2 provider, or
// LLM_PROVIDER), overriding the YAML model name. Plan covers the repair call;
// the compaction call uses compact, else stage1's model.
func (c *Config) stageModels() map[workflow.Stage]ModelRef {
	m := c.File.Models
	out := map[workflow.Stage]ModelRef{}
	compact := m.Compact
	if compact == nil {
		compact = m.Stage1
	}
	for st, ref := range map[workflow.Stage]*ModelRef{
		workflow.StageOne: m.Stage1, workflow.StageTwo: m.Stage2, workflow.StagePlan: m.Plan,
		workflow.StageRepair: m.Plan, workflow.StageAction: m.Action, workflow.StageCompact: compact,
	} {
		if ref != nil {
			out[st] = *ref
		}
	}
	if c.LLMModelStage2 != "" {
		ref := out[workflow.StageTwo]
		ref.Model = c.LLMModelStage2
		out[workflow.StageTwo] = ref
	}
	return out
}

// llmFor returns the adapter configuration of ref: the environment's with
// ref's provider and model. An entry with neither (only maxTokens,
// temperature or outputMode) is LLM_PROVIDER's LLM_MODEL.
func (c *Config) llmFor(ref ModelRef) llm.Config {
	lc := c.LLM()
	if ref.Provider == "" && ref.Model == "" {
		return lc
	}
	if ref.Provider != "" {
		lc.Provider = ref.Provider
	}
	lc.Model = ref.Model
	return lc
}

// modelProblems reports the models: entries start-up must refuse: a
// temperature outside 0 to 2, a negative maxTokens, or an output mode the
// entry's provider cannot use.
func (c *Config) modelProblems() []string {
	var out []string
	check := func(where string, ref ModelRef) {
		if t := ref.Temperature; t != nil && (*t < 0 || *t > 2) {
			out = append(out, fmt.Sprintf("models.%s.temperature must be between 0 and 2, not %g", where, *t))
		}
		if ref.MaxTokens < 0 {
			out = append(out, fmt.Sprintf("models.%s.maxTokens must not be negative", where))
		}
		if err := llm.CheckOutputMode(c.llmFor(ref).SelectedProvider(), ref.OutputMode); err != nil {
			out = append(out, fmt.Sprintf("models.%s.outputMode: %s", where, workflow.PublicMessage(err)))
		}
	}
	m := c.File.Models
	for _, e := range []struct {
		name string
		ref  *ModelRef
	}{{"stage1", m.Stage1}, {"stage2", m.Stage2}, {"plan", m.Plan}, {"action", m.Action}, {"compact", m.Compact}} {
		if e.ref != nil {
			check(e.name, *e.ref)
		}
	}
	for i, ref := range m.Fallback {
		check(fmt.Sprintf("fallback[%d]", i), ref)
	}
	return out
}

// openRouter builds one adapter per distinct configured model and the
// llm.Router over them. Every adapter is validated before any is used. The
// returned func closes every adapter opened; on an error they are closed
// already.
func openRouter(ctx context.Context, cfg Config) (_ *llm.Router, closeAll func() error, err error) {
	// One adapter per distinct model (so its in-flight limit holds), each
	// route with its entry's own maxTokens, temperature and output mode.
	opened := map[string]*llm.Model{}
	closeOpened := func() error {
		var errs []error
		for _, m := range opened {
			errs = append(errs, m.Close())
		}
		return errors.Join(errs...)
	}
	defer func() {
		if err != nil {
			// closeOpened, not the result closeAll, which an error return
			// has set to nil.
			_ = closeOpened()
		}
	}()
	open := func(lc llm.Config, ref ModelRef) (llm.Route, error) {
		m, err := llm.New(ctx, lc)
		if err != nil {
			return llm.Route{}, fmt.Errorf("llm.New(%s/%s): %w", lc.Provider, lc.Model, err)
		}
		if prev, ok := opened[m.Name()]; ok {
			if err := m.Close(); err != nil {
				return llm.Route{}, err
			}
			m = prev
		}
		opened[m.Name()] = m
		return llm.Route{Name: m.Name(), Model: m, MaxTokens: ref.MaxTokens, Temperature: ref.Temperature, OutputMode: ref.OutputMode}, nil
	}
	def, err := open(cfg.LLM(), ModelRef{})
	if err != nil {
		return nil, nil, err
	}
	stages := map[workflow.Stage]llm.Route{}
	for st, ref := range cfg.stageModels() {
		if stages[st], err = open(cfg.llmFor(ref), ref); err != nil {
			return nil, nil, err
		}
	}
	var fallback []llm.Route
	for _, ref := range cfg.File.Models.Fallback {
		rt, err := open(cfg.llmFor(ref), ref)
		if err != nil {
			return nil, nil, err
		}
		fallback = append(fallback, rt)
	}
	return llm.NewRouter(def, stages, fallback), closeOpened, nil
}

// modelNames lists every model m routes to (just its name when it does not
// route), for /readyz.
func modelNames(m NamedModel) []string {
	if r, ok := m.(*llm.Router); ok {
		return r.Models()
	}
	return []string{m.Name()}
}
