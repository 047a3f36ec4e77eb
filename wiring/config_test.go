package wiring

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twostep/twostep/engine"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestLoadConfigDefaultsAndEnv(t *testing.T) {
	t.Parallel()
	cfg, err := LoadConfig(envOf(map[string]string{
		"GATEWAY_TOKENS": "alice:alice-token-000000001,bob:bob-token-00000000002", "GATEWAY_ADMIN_TOKENS": "root:root-token-0000000003",
		"OPENAI_API_KEY": "sk-x", "GATEWAY_MAX_STEPS": "7", "LOG_FORMAT": "console",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Addr != ":8080" || cfg.MaxSteps != 7 || cfg.LogLevel != "info" || cfg.LogFormat != "console" || cfg.RedisURL != "" {
		t.Errorf("config = %+v", cfg)
	}
	if len(cfg.Users) != 2 || cfg.Users[1].UserID != "bob" || len(cfg.Admins) != 1 || cfg.Admins[0].Token != "root-token-0000000003" {
		t.Errorf("credentials = %+v / %+v", cfg.Users, cfg.Admins)
	}
	secrets := strings.Join(cfg.Secrets(), ",")
	for _, s := range []string{"sk-x", "alice-token-000000001", "bob-token-00000000002", "root-token-0000000003"} {
		if !strings.Contains(secrets, s) {
			t.Errorf("Secrets() lacks %q", s)
		}
	}
}

// TestLoadConfigReportsEveryProblem: one error lists every problem, and
// never quotes a token or key.
func TestLoadConfigReportsEveryProblem(t *testing.T) {
	t.Parallel()
	_, err := LoadConfig(envOf(map[string]string{
		"GATEWAY_TOKENS": "alice", "GATEWAY_ADMIN_TOKENS": ":secret-admin", "GATEWAY_MAX_STEPS": "0",
		"LOG_FORMAT": "xml", "LOG_LEVEL": "loud", "REDIS_URL": "http://x", "LLM_PROVIDER": "nope",
		"OPENAI_API_KEY": "sk-secret-key", "REDIS_KEY_PREFIX": "a{b}",
	}))
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"GATEWAY_TOKENS", "GATEWAY_ADMIN_TOKENS", "GATEWAY_MAX_STEPS", "LOG_FORMAT", "LOG_LEVEL", "REDIS_URL", "LLM_PROVIDER", "REDIS_KEY_PREFIX"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %s:\n%v", want, err)
		}
	}
	for _, secret := range []string{"secret-admin", "sk-secret-key"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error quotes a secret: %v", err)
		}
	}
}

func TestLoadConfigFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "gateway.yaml")
	yaml := `templates:
  overrideDir: /tmp/tmpl
limits:
  maxBodyBytes: 1048576
  maxUploadBytes: 2048
  historyBudget: 5000
  maxRunningPerUser: 9
  httpTimeout: 5s
  retention: 72h
  leaseTTL: 4s
  dispatchPartitions: 8
  recoverInterval: 30s
  loopRepeats: 0
  maxReplans: 3
  compaction: false
  idempotencyWindow: 2h
connections:
  - user: alice
    label: crm
    kind: http
    baseURL: https://crm.example.test
    headers:
      Authorization: "Bearer ${CRM_TOKEN}"
mcpServers:
  - name: files
    command: node
    args: [server.js]
    env: {FILES_TOKEN: "${CRM_TOKEN}"}
openapiActions:
  - name: tickets
    spec: tickets.yaml
    headers: {X-Api-Key: "${TICKETS_KEY}"}
`
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(envOf(map[string]string{
		"GATEWAY_TOKENS": "alice:alice-token-000000001", "OPENAI_API_KEY": "k", "GATEWAY_CONFIG": path, "CRM_TOKEN": "crm-secret", "TICKETS_KEY": "tickets-key-0123456789",
	}))
	if err != nil {
		t.Fatal(err)
	}
	l := cfg.File.Limits
	if cfg.File.Templates.OverrideDir != "/tmp/tmpl" || l.HTTP.MaxBodyBytes != 1<<20 || l.HTTP.MaxDocumentBytes != 2048 ||
		l.HistoryBudget != 5000 || l.MaxRunningPerUser != 9 || l.Actions.HTTPTimeout != 5*time.Second || l.Retention != 72*time.Hour ||
		l.LeaseTTL != 4*time.Second || l.DispatchPartitions != 8 || l.RecoverInterval != 30*time.Second ||
		l.HTTP.IdempotencyWindow != 2*time.Hour {
		t.Errorf("file config = %+v", cfg.File)
	}
	// loopRepeats: 0 turns detection off; unset keeps the default.
	if got := l.loopRepeats(); got != -1 {
		t.Errorf("loopRepeats: 0 maps to %d, want -1 (off)", got)
	}
	if got := (FileLimits{}).loopRepeats(); got != 0 {
		t.Errorf("unset loopRepeats maps to %d, want 0 (the default)", got)
	}
	if l.Compaction == nil || *l.Compaction {
		t.Errorf("compaction: false read as %v", l.Compaction)
	}
	// maxReplans: unset keeps the default, 0 or replanOnFailure: false
	// turns re-planning off.
	off, zero := false, 0
	for _, tc := range []struct {
		limits FileLimits
		want   int
	}{
		{l, 3}, {FileLimits{}, 0}, {FileLimits{MaxReplans: &zero}, -1},
		{FileLimits{ReplanOnFailure: &off, MaxReplans: l.MaxReplans}, -1},
	} {
		if got := tc.limits.maxReplans(); got != tc.want {
			t.Errorf("maxReplans() of %+v = %d, want %d", tc.limits, got, tc.want)
		}
	}
	if len(cfg.Actions.Connections) != 1 || cfg.Actions.Connections[0].Label != "crm" {
		t.Errorf("actions config = %+v", cfg.Actions)
	}
	if len(cfg.MCP.Servers) != 1 || cfg.MCP.Servers[0].Env["FILES_TOKEN"] != "crm-secret" || !slices.Contains(cfg.Secrets(), "crm-secret") {
		t.Errorf("mcp config = %+v; the resolved env value must be a secret", cfg.MCP)
	}
	if src := cfg.OpenAPI.Sources; len(src) != 1 || src[0].Spec != filepath.Join(filepath.Dir(path), "tickets.yaml") ||
		!slices.Contains(cfg.Secrets(), "tickets-key-0123456789") {
		t.Errorf("openapi config = %+v; the spec is relative to the file, the resolved header a secret", cfg.OpenAPI)
	}

	short := filepath.Join(t.TempDir(), "short.yaml")
	if err := os.WriteFile(short, []byte("limits:\n  leaseTTL: 10ms\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = LoadConfig(envOf(map[string]string{"GATEWAY_TOKENS": "a:a-token-00000000000001", "OPENAI_API_KEY": "k", "GATEWAY_CONFIG": short}))
	if err == nil || !strings.Contains(err.Error(), "leaseTTL must be at least 300ms") {
		t.Errorf("a 10ms leaseTTL was accepted: %v", err)
	}
	many := filepath.Join(t.TempDir(), "many.yaml")
	if err := os.WriteFile(many, []byte("limits:\n  dispatchPartitions: 1000\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = LoadConfig(envOf(map[string]string{"GATEWAY_TOKENS": "a:a-token-00000000000001", "OPENAI_API_KEY": "k", "GATEWAY_CONFIG": many}))
	if err == nil || !strings.Contains(err.Error(), "dispatchPartitions must be at most 256") {
		t.Errorf("1000 dispatch partitions were accepted: %v", err)
	}

	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("limitz: {}\nconnections:\n  - user: a\n    labl: x\nmcpServers:\n  - name: Bad\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = LoadConfig(envOf(map[string]string{"GATEWAY_TOKENS": "a:a-token-00000000000001", "OPENAI_API_KEY": "k", "GATEWAY_CONFIG": bad}))
	if err == nil || !strings.Contains(err.Error(), "limitz") || !strings.Contains(err.Error(), "labl") || !strings.Contains(err.Error(), `name "Bad"`) {
		t.Errorf("unknown keys not reported: %v", err)
	}

	// The file is decoded once: YAML that does not parse is one problem,
	// not one per section reader.
	broken := filepath.Join(t.TempDir(), "broken.yaml")
	if err := os.WriteFile(broken, []byte("connections: [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = LoadConfig(envOf(map[string]string{"GATEWAY_TOKENS": "a:a-token-00000000000001", "OPENAI_API_KEY": "k", "GATEWAY_CONFIG": broken}))
	if err == nil || strings.Count(err.Error(), "\n  - ") != 1 || !strings.Contains(err.Error(), "GATEWAY_CONFIG") {
		t.Errorf("broken YAML: %v, want exactly one problem naming GATEWAY_CONFIG", err)
	}
}

// TestLoadConfigRefusesSharedAndShortTokens: a token given to two entries
// (here a user and an admin, which would let bob act as root) and a token
// under 16 characters stop start-up; the message names the users and the
// variables, never a token.
func TestLoadConfigRefusesSharedAndShortTokens(t *testing.T) {
	t.Parallel()
	shared := "shared-token-0123456789"
	_, err := LoadConfig(envOf(map[string]string{
		"GATEWAY_TOKENS":       "alice:" + shared + ",bob:" + shared + ",carol:x",
		"GATEWAY_ADMIN_TOKENS": "root:" + shared,
		"LLM_PROVIDER":         "scripted",
	}))
	if err == nil {
		t.Fatal("start-up accepted a shared token and a one-character token")
	}
	msg := err.Error()
	for _, want := range []string{`one token is shared by "alice" (GATEWAY_TOKENS), "bob" (GATEWAY_TOKENS), "root" (GATEWAY_ADMIN_TOKENS)`,
		`GATEWAY_TOKENS: the token of user "carol" is shorter than 16 characters`} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, shared) || strings.Contains(msg, ":x") {
		t.Errorf("error quotes a token:\n%s", msg)
	}
	if strings.Count(msg, "\n  - ") != 2 {
		t.Errorf("want exactly two problems (alice's own token is not short), got:\n%s", msg)
	}
}

// TestMetricsToken: GATEWAY_METRICS_TOKEN is a token of its own — short
// or shared with a user it stops start-up without being quoted; given, it
// is parsed (sha256:<hex> too) and redacted; unset, start-up warns that
// /metrics answers 401.
func TestMetricsToken(t *testing.T) {
	t.Parallel()
	user := "alice-token-000000001"
	for value, want := range map[string]string{
		"short":   "GATEWAY_METRICS_TOKEN: the token of user \"scraper\" is shorter than 16 characters",
		user:      "one token is shared by \"alice\" (GATEWAY_TOKENS), \"scraper\" (GATEWAY_METRICS_TOKEN)",
		"a,b":     "GATEWAY_METRICS_TOKEN must be one token",
		"sha256:": "sha256: must be followed by 64 hex digits",
	} {
		_, err := LoadConfig(envOf(map[string]string{"GATEWAY_TOKENS": "alice:" + user, "GATEWAY_METRICS_TOKEN": value, "LLM_PROVIDER": "scripted"}))
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(strings.ReplaceAll(err.Error(), "alice", ""), user) {
			t.Errorf("GATEWAY_METRICS_TOKEN=%q: %v, want a problem with %q and no token", value, err, want)
		}
	}
	scrape := "scrape-token-0123456789"
	cfg, err := LoadConfig(envOf(map[string]string{"GATEWAY_TOKENS": "alice:" + user, "GATEWAY_METRICS_TOKEN": scrape, "LLM_PROVIDER": "scripted"}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MetricsToken == nil || cfg.MetricsToken.Token != scrape || !slices.Contains(cfg.Secrets(), scrape) {
		t.Errorf("metrics token %+v, secrets %d: want it parsed and redacted", cfg.MetricsToken, len(cfg.Secrets()))
	}
	if w := strings.Join(cfg.Warnings(), "\n"); strings.Contains(w, "GATEWAY_METRICS_TOKEN") {
		t.Errorf("warnings = %q with the metrics token set", w)
	}
	cfg, err = LoadConfig(envOf(map[string]string{"GATEWAY_TOKENS": "alice:" + user, "LLM_PROVIDER": "scripted"}))
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(cfg.Warnings(), "\n"); !strings.Contains(w, "GATEWAY_METRICS_TOKEN unset: /metrics answers 401") {
		t.Errorf("warnings = %q, want the unset metrics token named", w)
	}
}

// TestConfigProviderSelectionAndWarnings: OPENAI_BASE_URL alone selects
// openai (it used to fall through to ollama), a key no model uses is a
// warning naming the variable, and the memory store says it keeps nothing.
func TestConfigProviderSelectionAndWarnings(t *testing.T) {
	t.Parallel()
	base := map[string]string{"GATEWAY_TOKENS": "alice:alice-token-000000001"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	cfg, err := LoadConfig(envOf(with("OPENAI_BASE_URL", "http://127.0.0.1:9/v1", "LLM_MODEL", "foo")))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.LLM().SelectedProvider(); got != "openai" {
		t.Errorf("OPENAI_BASE_URL selects %q, want openai", got)
	}
	if w := strings.Join(cfg.Warnings(), "\n"); strings.Contains(w, "not used") || !strings.Contains(w, "memory store") {
		t.Errorf("warnings = %q, want only the memory-store one", w)
	}

	cfg, err = LoadConfig(envOf(with("LLM_PROVIDER", "ollama", "OPENAI_BASE_URL", "http://127.0.0.1:9/v1",
		"ANTHROPIC_API_KEY", "sk-ant-secret", "REDIS_URL", "redis://127.0.0.1:6379/0")))
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(cfg.Warnings(), "\n")
	if !strings.Contains(w, "OPENAI_BASE_URL, ANTHROPIC_API_KEY set but not used") || !strings.Contains(w, "provider(s) ollama") {
		t.Errorf("warnings = %q, want the unused settings named", w)
	}
	if strings.Contains(w, "sk-ant-secret") || strings.Contains(w, "127.0.0.1:9") || strings.Contains(w, "memory store") {
		t.Errorf("warnings = %q: quote a value or mention the memory store with REDIS_URL set", w)
	}
}

// GATEWAY_MAX_STEPS's default is a struct tag, which cannot name the
// engine's constant: this keeps the two equal.
func TestMaxStepsDefaultIsTheEngines(t *testing.T) {
	t.Parallel()
	f, _ := reflect.TypeFor[Config]().FieldByName("MaxSteps")
	if got := f.Tag.Get("envDefault"); got != strconv.Itoa(engine.DefaultMaxSteps) {
		t.Errorf("GATEWAY_MAX_STEPS default = %q, want %d (workflow.DefaultMaxSteps)", got, engine.DefaultMaxSteps)
	}
}
