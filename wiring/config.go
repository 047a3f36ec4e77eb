package wiring

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/caarlos0/env/v11"
	"go.yaml.in/yaml/v3"

	"github.com/twostep/twostep/actions"
	"github.com/twostep/twostep/actions/mcp"
	"github.com/twostep/twostep/actions/openapi"
	"github.com/twostep/twostep/approval"
	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/httpapi"
	"github.com/twostep/twostep/llm"
	"github.com/twostep/twostep/modes/react"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/redisstore"
	"github.com/twostep/twostep/workflow"
	"github.com/twostep/twostep/yamlcheck"
)

// Config is the whole gateway configuration: the environment variables of
// DESIGN §7 plus the optional YAML file named by GATEWAY_CONFIG. It is
// built once by LoadConfig and passed down; nothing reads the environment
// afterwards.
type Config struct {
	Addr        string `env:"GATEWAY_ADDR" envDefault:":8080"`
	RedisURL    string `env:"REDIS_URL"`
	Tokens      string `env:"GATEWAY_TOKENS"`
	AdminTokens string `env:"GATEWAY_ADMIN_TOKENS"`
	InsecureDev bool   `env:"GATEWAY_INSECURE_DEV"`
	// MetricsTokenValue is the bearer token /metrics answers to (a token
	// of 16+ characters, or sha256:<64 hex>); unset, /metrics answers 401
	// except in insecure development mode.
	MetricsTokenValue string `env:"GATEWAY_METRICS_TOKEN"`

	// RedisKeyPrefix starts every key of the Redis store and its dispatch
	// streams (redisstore.DefaultKeyPrefix when empty): gateways with
	// different prefixes share a Redis without seeing each other's
	// workflows or rounds.
	RedisKeyPrefix string `env:"REDIS_KEY_PREFIX"`

	// Bearer JWTs beside the static tokens (DESIGN §9.7).
	JWTJWKS       string `env:"GATEWAY_JWT_JWKS"`
	JWTIssuer     string `env:"GATEWAY_JWT_ISSUER"`
	JWTAudience   string `env:"GATEWAY_JWT_AUDIENCE"`
	JWTAdminClaim string `env:"GATEWAY_JWT_ADMIN_CLAIM"`

	LLMProvider     string `env:"LLM_PROVIDER"`
	LLMModel        string `env:"LLM_MODEL"`
	LLMModelStage2  string `env:"LLM_MODEL_STAGE2"`
	LLMOutputMode   string `env:"LLM_OUTPUT_MODE"`
	OpenAIBaseURL   string `env:"OPENAI_BASE_URL"`
	OpenAIAPIKey    string `env:"OPENAI_API_KEY"`
	AnthropicAPIKey string `env:"ANTHROPIC_API_KEY"`
	GoogleAPIKey    string `env:"GOOGLE_API_KEY"`
	OllamaBaseURL   string `env:"OLLAMA_BASE_URL"`

	ConfigFile string `env:"GATEWAY_CONFIG"`
	MaxSteps   int    `env:"GATEWAY_MAX_STEPS" envDefault:"10"`
	LogLevel   string `env:"LOG_LEVEL" envDefault:"info"`
	LogFormat  string `env:"LOG_FORMAT" envDefault:"json"`

	// Users and Admins are Tokens and AdminTokens parsed.
	Users  []httpapi.Credential `env:"-"`
	Admins []httpapi.Credential `env:"-"`
	// MetricsToken is MetricsTokenValue parsed (nil when unset).
	MetricsToken *httpapi.Credential `env:"-"`
	// probesOnly marks a worker process (ApplyCredentialRule): its
	// authenticator is open but unreachable, which opens no /metrics.
	probesOnly bool
	// File is the YAML file's content (zero when GATEWAY_CONFIG is unset).
	File FileConfig `env:"-"`
	// Actions is the file's connections, httpActions and limits, resolved.
	Actions actions.Config `env:"-"`
	// MCP is the file's mcpServers, resolved (actions/mcp).
	MCP mcp.Config `env:"-"`
	// OpenAPI is the file's openapiActions, resolved (actions/openapi).
	OpenAPI openapi.Config `env:"-"`
}

// FileConfig is the gateway's own part of the GATEWAY_CONFIG file; the
// connections, httpActions and mcpServers sections are handed, decoded
// once, to actions.ConfigFromYAML and mcp.ConfigFromYAML.
type FileConfig struct {
	Templates struct {
		// OverrideDir holds *.tmpl files that replace the embedded ones.
		OverrideDir string `yaml:"overrideDir"`
	} `yaml:"templates"`
	Limits FileLimits `yaml:"limits"`
	// Connections and HTTPActions are checked by actions.ConfigFromYAML.
	Connections yaml.Node `yaml:"connections"`
	HTTPActions yaml.Node `yaml:"httpActions"`
	// MCPServers is checked by mcp.ConfigFromYAML.
	MCPServers yaml.Node `yaml:"mcpServers"`
	// OpenAPIActions is checked by openapi.ConfigFromYAML.
	OpenAPIActions yaml.Node `yaml:"openapiActions"`
	// Models routes stages to models and lists the fallbacks (models.go).
	Models FileModels `yaml:"models"`
	// Approvals says which calls wait for a person's decision (DESIGN
	// §9.1); checked against the registry at start.
	Approvals approval.Config `yaml:"approvals"`
	// Prices are the models' prices for the economy report, by
	// "<provider>/<model>" (prices.go).
	Prices map[string]FilePrice `yaml:"prices"`
	// Webhooks and Budgets: DESIGN §10.3 (webhooks.go, budgets.go).
	Webhooks FileWebhooks `yaml:"webhooks"`
	Budgets  FileBudgets  `yaml:"budgets"`
	// Stage2 holds Stage 2's own settings.
	Stage2 FileStage2 `yaml:"stage2"`
}

// FileStage2 is the file's stage2 section.
type FileStage2 struct {
	// RequireGrounded is never (default), write or all: which Stage 2
	// replies an invented value rejects (react.Grounded, DESIGN §10.4).
	RequireGrounded string `yaml:"requireGrounded"`
	// EarlyStart starts Stage 2 while Stage 1's reply still streams, as
	// soon as its first four keys are complete (react.EarlyStage2, DESIGN
	// §11.2); nil means true.
	EarlyStart *bool `yaml:"earlyStart"`
}

// earlyStart is stage2.earlyStart with its default (true).
func (s FileStage2) earlyStart() bool { return s.EarlyStart == nil || *s.EarlyStart }

// FileLimits is the file's limits section: the HTTP limits, the engine's
// and the store's, and (inline) those of the actions package.
type FileLimits struct {
	HTTP    httpapi.Limits `yaml:",inline"`
	Actions actions.Limits `yaml:",inline"`
	// HistoryBudget bounds Stage 1's sealed history section in
	// characters (0: 12,000); past it, compaction folds the oldest
	// entries into a summary.
	HistoryBudget int `yaml:"historyBudget"`
	// LatestBudget is the latest history section's size in characters
	// past which its entries are sealed (0: placeholders.DefaultLatestBudget).
	LatestBudget int `yaml:"latestBudget"`
	// DocumentsIndexBudget bounds Stage 1's documents index in characters
	// (0: 16,000).
	DocumentsIndexBudget int `yaml:"documentsIndexBudget"`
	// HistoryLayout is sections (default) or single (DESIGN §11.1).
	HistoryLayout string `yaml:"historyLayout"`
	// MaxRunningPerUser bounds a user's running rounds (0: 4).
	MaxRunningPerUser int `yaml:"maxRunningPerUser"`
	// MaxQueuedPerUser bounds a user's queued rounds over all their
	// workflows (0: engine.DefaultMaxQueuedPerUser).
	MaxQueuedPerUser int `yaml:"maxQueuedPerUser"`
	// MaxForkBytes bounds the document bytes one fork copies (0:
	// engine.DefaultMaxForkBytes, 16 MiB).
	MaxForkBytes int64 `yaml:"maxForkBytes"`
	// Workers bounds the rounds this instance runs at once (0: 8).
	Workers int `yaml:"workers"`
	// ModelTimeout bounds one model call attempt (0: 120s).
	ModelTimeout time.Duration `yaml:"modelTimeout"`
	// ModelMaxInFlight bounds concurrent model calls (0: 16).
	ModelMaxInFlight int `yaml:"modelMaxInFlight"`
	// TraceCap is how many traces are kept per workflow (0: 500).
	TraceCap int `yaml:"traceCap"`
	// Retention expires a workflow this long after its last change, in
	// either store (0 keeps it until deleted).
	Retention time.Duration `yaml:"retention"`
	// ActionPlanTopK is how many actions the plan prompt offers (0: default).
	ActionPlanTopK int `yaml:"actionPlanTopK"`
	// LeaseTTL is how long a round's lease outlives its last renewal (0:
	// 10s); a dead instance's rounds are taken over within LeaseTTL + 1s.
	LeaseTTL time.Duration `yaml:"leaseTTL"`
	// ExperimentConcurrency bounds the calls one experiment re-runs at
	// once (0: 4; docs/experiments.md).
	ExperimentConcurrency int `yaml:"experimentConcurrency"`
	// MaxRunningExperiments bounds the experiments running at once over
	// every instance (0: 2; docs/experiments.md).
	MaxRunningExperiments int `yaml:"maxRunningExperiments"`
	// DispatchPartitions is how many Redis streams rounds are dispatched
	// through (0: 4); every instance sharing the Redis must use the same.
	DispatchPartitions int `yaml:"dispatchPartitions"`
	// RecoverInterval is how often the scan of running workflows looks for
	// rounds no instance runs (0: 10s with Redis, whose stream dispatch
	// and reclaim cover the normal path; 1s in memory).
	RecoverInterval time.Duration `yaml:"recoverInterval"`
	// ShutdownGrace is how long SIGTERM lets the model calls and actions in
	// flight finish and commit before they are cancelled (0: 20s).
	ShutdownGrace time.Duration `yaml:"shutdownGrace"`
	// LoopRepeats ends a round whose step repeated an earlier one (same
	// action, parameters and result) this many times, after warning the
	// model one repeat before (unset: 3; 0 turns detection off).
	LoopRepeats *int `yaml:"loopRepeats"`
	// ApprovalTimeout rejects an undecided approval as expired (0: 24h).
	ApprovalTimeout time.Duration `yaml:"approvalTimeout"`
	// ReplanOnFailure makes the action-plan mode re-plan after a failed
	// step (unset: true); MaxReplans bounds those calls per round (unset:
	// 2; 0 turns re-planning off).
	ReplanOnFailure *bool `yaml:"replanOnFailure"`
	MaxReplans      *int  `yaml:"maxReplans"`
	// Compaction makes React mode summarise history entries over
	// historyBudget with a model call instead of dropping them (unset:
	// true).
	Compaction *bool `yaml:"compaction"`
}

// maxReplans maps limits.replanOnFailure and limits.maxReplans to
// actionplan.Options.MaxReplans: off → -1, unset → 0 (the default).
func (l FileLimits) maxReplans() int {
	switch {
	case l.ReplanOnFailure != nil && !*l.ReplanOnFailure:
		return -1
	case l.MaxReplans == nil:
		return 0
	case *l.MaxReplans == 0:
		return -1
	}
	return *l.MaxReplans
}

// loopRepeats maps limits.loopRepeats to engine.Config.LoopRepeats and
// prompts.Options.LoopRepeats: unset → 0 (the default), 0 → -1 (off).
func (l FileLimits) loopRepeats() int {
	switch {
	case l.LoopRepeats == nil:
		return 0
	case *l.LoopRepeats == 0:
		return -1
	}
	return *l.LoopRepeats
}

// LoadConfig reads the environment through getenv and, when GATEWAY_CONFIG
// is set, the YAML file; then validates everything, reporting every
// problem at once. No error message ever quotes a token or a key.
func LoadConfig(getenv func(string) string) (Config, error) {
	var cfg Config
	params, err := env.GetFieldParams(&cfg)
	if err != nil {
		return cfg, err
	}
	vars := map[string]string{}
	for _, p := range params {
		if v := getenv(p.Key); v != "" {
			vars[p.Key] = v
		}
	}
	if err := env.ParseWithOptions(&cfg, env.Options{Environment: vars}); err != nil {
		return cfg, fmt.Errorf("environment: %w", err)
	}
	var problems []string
	if cfg.ConfigFile != "" {
		problems = append(problems, cfg.readFile(getenv)...)
	}
	problems = append(problems, cfg.problems()...)
	if len(problems) > 0 {
		return cfg, fmt.Errorf("invalid configuration:\n  - %s", strings.Join(problems, "\n  - "))
	}
	return cfg, nil
}

// readFile loads GATEWAY_CONFIG, refusing unknown keys so typos are not
// silently ignored. Every problem names the file, its line and the key
// path as written (configProblems).
func (c *Config) readFile(getenv func(string) string) []string {
	data, err := os.ReadFile(c.ConfigFile)
	if err != nil {
		return []string{fmt.Sprintf("GATEWAY_CONFIG: %v", err)}
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		// A syntax error: yaml's message names the line.
		return []string{fmt.Sprintf("GATEWAY_CONFIG %s: %s", c.ConfigFile, strings.TrimPrefix(err.Error(), "yaml: "))}
	}
	problems := yamlcheck.Strings(yamlcheck.Decode(&root, "", &c.File))
	// The file is decoded once, above: actions and mcp take their
	// sections from it.
	lookup := func(k string) (string, bool) { v := getenv(k); return v, v != "" }
	ac, err := actions.ConfigFromYAML(&c.File.Connections, &c.File.HTTPActions, c.File.Limits.Actions, lookup)
	if err != nil {
		problems = append(problems, fmt.Sprintf("GATEWAY_CONFIG %s: %v", c.ConfigFile, err))
	}
	c.Actions = ac
	mc, err := mcp.ConfigFromYAML(&c.File.MCPServers, lookup)
	if err != nil {
		problems = append(problems, fmt.Sprintf("GATEWAY_CONFIG %s: %v", c.ConfigFile, err))
	}
	c.MCP = mc
	oc, err := openapi.ConfigFromYAML(&c.File.OpenAPIActions, filepath.Dir(c.ConfigFile), lookup)
	if err != nil {
		problems = append(problems, fmt.Sprintf("GATEWAY_CONFIG %s: %v", c.ConfigFile, err))
	}
	c.OpenAPI = oc
	c.File.Webhooks.resolve(lookup)
	return configProblems(c.ConfigFile, &root, problems)
}

// Validate reports every problem of the configuration at once.
func (c *Config) Validate() error {
	if p := c.problems(); len(p) > 0 {
		return fmt.Errorf("invalid configuration:\n  - %s", strings.Join(p, "\n  - "))
	}
	return nil
}

func (c *Config) problems() []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	var err error
	if c.Users, err = httpapi.ParseCredentials(c.Tokens); err != nil {
		add("GATEWAY_TOKENS: %v", err)
	}
	if c.Admins, err = httpapi.ParseCredentials(c.AdminTokens); err != nil {
		add("GATEWAY_ADMIN_TOKENS: %v", err)
	}
	c.MetricsToken = nil
	if c.MetricsTokenValue != "" {
		m, err := httpapi.ParseCredentials(metricsUser + ":" + c.MetricsTokenValue)
		switch {
		case strings.Contains(c.MetricsTokenValue, ","):
			add("GATEWAY_METRICS_TOKEN must be one token (or sha256:<64 hex>), without commas")
		case err != nil:
			add("GATEWAY_METRICS_TOKEN: %v", err)
		default:
			c.MetricsToken = &m[0]
		}
	}
	problems = append(problems, tokenProblems(c.Users, c.Admins, c.MetricsToken)...)
	if c.JWTJWKS != "" && (c.JWTIssuer == "" || c.JWTAudience == "") {
		add("GATEWAY_JWT_JWKS needs GATEWAY_JWT_ISSUER and GATEWAY_JWT_AUDIENCE: a token from any issuer or for any audience must not be accepted")
	}
	if c.MaxSteps < 1 || c.MaxSteps > engine.DefaultMaxStepsLimit {
		add("GATEWAY_MAX_STEPS must be between 1 and %d, not %d", engine.DefaultMaxStepsLimit, c.MaxSteps)
	}
	if !oneOf(strings.ToLower(c.LogFormat), "json", "console") {
		add("LOG_FORMAT must be json or console, not %q", c.LogFormat)
	}
	if _, err := parseLevel(c.LogLevel); err != nil {
		add("LOG_LEVEL: %v", err)
	}
	if c.RedisURL != "" && !strings.HasPrefix(c.RedisURL, "redis://") && !strings.HasPrefix(c.RedisURL, "rediss://") {
		add("REDIS_URL must start with redis:// or rediss://")
	}
	if strings.ContainsAny(c.RedisKeyPrefix, "{}") {
		// A brace would move keys out of their hash slot on a cluster.
		add("REDIS_KEY_PREFIX must not contain braces")
	}
	if c.Addr == "" {
		add("GATEWAY_ADDR must not be empty")
	}
	if err := c.File.Limits.HTTP.Validate(); err != nil {
		add("limits: %v", err)
	}
	l := c.File.Limits
	if l.LeaseTTL > 0 && l.LeaseTTL < 300*time.Millisecond {
		add("limits: leaseTTL must be at least 300ms")
	}
	if l.DispatchPartitions > redisstore.MaxDispatchPartitions {
		add("limits: dispatchPartitions must be at most %d", redisstore.MaxDispatchPartitions)
	}
	if l.HistoryLayout != "" && l.HistoryLayout != string(prompts.LayoutSections) && l.HistoryLayout != string(prompts.LayoutSingle) {
		add("limits: historyLayout must be sections or single, not %q", l.HistoryLayout)
	}
	if l.HistoryBudget < 0 || l.LatestBudget < 0 || l.DocumentsIndexBudget < 0 || l.MaxRunningPerUser < 0 || l.MaxQueuedPerUser < 0 || l.MaxForkBytes < 0 ||
		l.Workers < 0 || l.ModelTimeout < 0 ||
		l.ModelMaxInFlight < 0 || l.TraceCap < 0 || l.Retention < 0 || l.ActionPlanTopK < 0 || l.LeaseTTL < 0 ||
		l.DispatchPartitions < 0 || l.RecoverInterval < 0 || l.ExperimentConcurrency < 0 || l.MaxRunningExperiments < 0 ||
		l.ShutdownGrace < 0 || (l.LoopRepeats != nil && *l.LoopRepeats < 0) || l.ApprovalTimeout < 0 ||
		(l.MaxReplans != nil && *l.MaxReplans < 0) {
		add("limits: values must not be negative")
	}
	problems = append(problems, c.priceProblems()...)
	problems = append(problems, c.File.Webhooks.problems()...)
	problems = append(problems, c.File.Budgets.problems(budgetPrices(*c) != nil)...)
	if _, err := react.ParseGrounded(c.File.Stage2.RequireGrounded); err != nil {
		add("stage2.requireGrounded: %v", err)
	}
	if !strings.EqualFold(c.LLMProvider, llm.ProviderScripted) {
		if err := c.LLM().Validate(); err != nil {
			add("%v", err)
		}
		problems = append(problems, c.modelProblems()...)
	}
	return problems
}

// MinTokenLength is the shortest bearer token start-up accepts: a shorter
// one is guessable, and a typo like "alice:x" is more likely than intent.
const MinTokenLength = 16

// metricsUser names the metrics token in start-up messages.
const metricsUser = "scraper"

// tokenProblems refuses tokens shorter than MinTokenLength and a token
// given to more than one entry (across GATEWAY_TOKENS,
// GATEWAY_ADMIN_TOKENS and GATEWAY_METRICS_TOKEN): a shared token would
// act as whichever entry wins, admin included. Messages name users and
// variables, never a token.
func tokenProblems(users, admins []httpapi.Credential, metrics *httpapi.Credential) []string {
	var scraper []httpapi.Credential
	if metrics != nil {
		scraper = append(scraper, *metrics)
	}
	type entry struct{ user, list string }
	var problems []string
	owners := map[string][]entry{}
	var order []string
	for _, l := range []struct {
		name  string
		creds []httpapi.Credential
	}{{"GATEWAY_TOKENS", users}, {"GATEWAY_ADMIN_TOKENS", admins}, {"GATEWAY_METRICS_TOKEN", scraper}} {
		for _, c := range l.creds {
			if c.Digest == nil && len(c.Token) < MinTokenLength {
				problems = append(problems, fmt.Sprintf("%s: the token of user %q is shorter than %d characters", l.name, c.UserID, MinTokenLength))
			}
			sum := c.Sum()
			key := string(sum[:])
			if _, seen := owners[key]; !seen {
				order = append(order, key)
			}
			owners[key] = append(owners[key], entry{c.UserID, l.name})
		}
	}
	for _, tok := range order {
		if es := owners[tok]; len(es) > 1 {
			names := make([]string, len(es))
			for i, e := range es {
				names[i] = fmt.Sprintf("%q (%s)", e.user, e.list)
			}
			problems = append(problems, fmt.Sprintf("one token is shared by %s: every entry needs its own token", strings.Join(names, ", ")))
		}
	}
	return problems
}

// warnings lists what start-up should say but not refuse: provider settings
// no configured model reads (a typo or a leftover that silently does
// nothing), and that the memory store keeps nothing across a restart.
func (c *Config) Warnings() []string {
	var out []string
	if !strings.EqualFold(c.LLMProvider, llm.ProviderScripted) {
		var inUse []string
		for _, ref := range c.stageModels() {
			inUse = append(inUse, c.llmFor(ref).SelectedProvider())
		}
		for _, ref := range c.File.Models.Fallback {
			inUse = append(inUse, c.llmFor(ref).SelectedProvider())
		}
		lc := c.LLM()
		if unused := lc.UnusedSettings(inUse...); len(unused) > 0 {
			out = append(out, fmt.Sprintf("%s set but not used: the configured models are on provider(s) %s; "+
				"set LLM_PROVIDER or models: to use them, or unset them", strings.Join(unused, ", "), strings.Join(slices.Compact(slices.Sorted(slices.Values(append(inUse, lc.SelectedProvider())))), ", ")))
		}
	}
	if c.MetricsToken == nil && !c.MetricsOpen() {
		out = append(out, "GATEWAY_METRICS_TOKEN unset: /metrics answers 401 until it is set and the scraper sends it as Authorization: Bearer <token>")
	}
	if c.RedisURL == "" {
		msg := "memory store (REDIS_URL unset): workflows, documents and traces live in this process only and are lost when it stops"
		if c.File.Limits.Retention == 0 {
			msg += "; with no limits.retention they are also kept until deleted, so memory grows with every workflow"
		}
		out = append(out, msg)
	}
	return out
}

// MetricsOpen reports whether /metrics is served without a token: only an
// API process in insecure development mode with no credentials at all,
// where every route is open.
func (c *Config) MetricsOpen() bool {
	return c.InsecureDev && !c.probesOnly && len(c.Users) == 0 && len(c.Admins) == 0 && c.JWTJWKS == ""
}

// LLM returns the model adapter's configuration.
func (c *Config) LLM() llm.Config {
	return llm.Config{
		Provider: c.LLMProvider, Model: c.LLMModel,
		OpenAIBaseURL: c.OpenAIBaseURL, OpenAIAPIKey: c.OpenAIAPIKey, AnthropicAPIKey: c.AnthropicAPIKey,
		GoogleAPIKey: c.GoogleAPIKey, OllamaBaseURL: c.OllamaBaseURL,
		Timeout: c.File.Limits.ModelTimeout, MaxInFlight: c.File.Limits.ModelMaxInFlight,
		OutputMode: workflow.OutputMode(strings.ToLower(strings.TrimSpace(c.LLMOutputMode))),
	}
}

// Secrets returns every configured secret value (tokens, API keys, MCP
// servers' resolved env and header values) for trace redaction; connection
// secrets come from the actions registry.
func (c *Config) Secrets() []string {
	s := append([]string{c.OpenAIAPIKey, c.AnthropicAPIKey, c.GoogleAPIKey}, c.MCP.Secrets()...)
	s = append(s, c.OpenAPI.Secrets()...)
	s = append(s, c.File.Webhooks.secrets()...)
	for _, cr := range append(append([]httpapi.Credential(nil), c.Users...), c.Admins...) {
		if cr.Token != "" {
			s = append(s, cr.Token)
		}
	}
	if c.MetricsToken != nil && c.MetricsToken.Token != "" {
		s = append(s, c.MetricsToken.Token)
	}
	return s
}

func oneOf(s string, options ...string) bool {
	for _, o := range options {
		if s == o {
			return true
		}
	}
	return false
}
