package main

import (
	"context"
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
// ref's provider and model.
func (c *Config) llmFor(ref ModelRef) llm.Config {
	lc := c.LLM()
	if ref.Provider != "" {
		lc.Provider = ref.Provider
	}
	lc.Model = ref.Model
	return lc
}

// openRouter builds one adapter per distinct configured model and the
// llm.Router over them. Every adapter is validated before any is used.
func openRouter(ctx context.Context, cfg Config) (*llm.Router, error) {
	opened := map[string]llm.Route{}
	open := func(lc llm.Config, ref ModelRef) (llm.Route, error) {
		m, err := llm.New(ctx, lc)
		if err != nil {
			return llm.Route{}, fmt.Errorf("llm.New(%s/%s): %w", lc.Provider, lc.Model, err)
		}
		if rt, ok := opened[m.Name()]; ok {
			// One adapter per model; each route keeps its own settings.
			if err := m.Close(); err != nil {
				return llm.Route{}, err
			}
			rt.MaxTokens, rt.Temperature = ref.MaxTokens, ref.Temperature
			return rt, nil
		}
		rt := llm.Route{Name: m.Name(), Model: m, MaxTokens: ref.MaxTokens, Temperature: ref.Temperature}
		opened[m.Name()] = rt
		return rt, nil
	}
	def, err := open(cfg.LLM(), ModelRef{})
	if err != nil {
		return nil, err
	}
	stages := map[workflow.Stage]llm.Route{}
	for st, ref := range cfg.stageModels() {
		if stages[st], err = open(cfg.llmFor(ref), ref); err != nil {
			return nil, err
		}
	}
	var fallback []llm.Route
	for _, ref := range cfg.File.Models.Fallback {
		rt, err := open(cfg.llmFor(ref), ref)
		if err != nil {
			return nil, err
		}
		fallback = append(fallback, rt)
	}
	return llm.NewRouter(def, stages, fallback), nil
}

// modelProblems reports model entries start-up must refuse: a temperature
// outside 0 to 2, or a negative maxTokens.
func (m FileModels) modelProblems() []string {
	var out []string
	check := func(name string, ref *ModelRef) {
		if ref == nil {
			return
		}
		if t := ref.Temperature; t != nil && (*t < 0 || *t > 2) {
			out = append(out, fmt.Sprintf("models.%s.temperature must be between 0 and 2, not %g", name, *t))
		}
		if ref.MaxTokens < 0 {
			out = append(out, fmt.Sprintf("models.%s.maxTokens must not be negative", name))
		}
	}
	check("stage1", m.Stage1)
	check("stage2", m.Stage2)
	check("plan", m.Plan)
	check("action", m.Action)
	check("compact", m.Compact)
	for i := range m.Fallback {
		check(fmt.Sprintf("fallback[%d]", i), &m.Fallback[i])
	}
	return out
}

// modelNames lists every model m routes to (just its name when it does not
// route), for /readyz.
func modelNames(m namedModel) []string {
	if r, ok := m.(*llm.Router); ok {
		return r.Models()
	}
	return []string{m.Name()}
}
