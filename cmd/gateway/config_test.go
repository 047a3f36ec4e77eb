package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestLoadConfigDefaultsAndEnv(t *testing.T) {
	t.Parallel()
	cfg, err := loadConfig(envOf(map[string]string{
		"GATEWAY_TOKENS": "alice:t1,bob:t2", "GATEWAY_ADMIN_TOKENS": "root:t3",
		"OPENAI_API_KEY": "sk-x", "GATEWAY_MAX_STEPS": "7", "LOG_FORMAT": "console",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Addr != ":8080" || cfg.MaxSteps != 7 || cfg.LogLevel != "info" || cfg.LogFormat != "console" || cfg.RedisURL != "" {
		t.Errorf("config = %+v", cfg)
	}
	if len(cfg.Users) != 2 || cfg.Users[1].UserID != "bob" || len(cfg.Admins) != 1 || cfg.Admins[0].Token != "t3" {
		t.Errorf("credentials = %+v / %+v", cfg.Users, cfg.Admins)
	}
	secrets := strings.Join(cfg.Secrets(), ",")
	for _, s := range []string{"sk-x", "t1", "t2", "t3"} {
		if !strings.Contains(secrets, s) {
			t.Errorf("Secrets() lacks %q", s)
		}
	}
}

// TestLoadConfigReportsEveryProblem: one error lists every problem, and
// never quotes a token or key.
func TestLoadConfigReportsEveryProblem(t *testing.T) {
	t.Parallel()
	_, err := loadConfig(envOf(map[string]string{
		"GATEWAY_TOKENS": "alice", "GATEWAY_ADMIN_TOKENS": ":secret-admin", "GATEWAY_MAX_STEPS": "0",
		"LOG_FORMAT": "xml", "LOG_LEVEL": "loud", "REDIS_URL": "http://x", "LLM_PROVIDER": "nope",
		"OPENAI_API_KEY": "sk-secret-key",
	}))
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"GATEWAY_TOKENS", "GATEWAY_ADMIN_TOKENS", "GATEWAY_MAX_STEPS", "LOG_FORMAT", "LOG_LEVEL", "REDIS_URL", "LLM_PROVIDER"} {
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
connections:
  - user: alice
    label: crm
    kind: http
    baseURL: https://crm.example.test
    headers:
      Authorization: "Bearer ${CRM_TOKEN}"
`
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig(envOf(map[string]string{
		"GATEWAY_TOKENS": "alice:t1", "OPENAI_API_KEY": "k", "GATEWAY_CONFIG": path, "CRM_TOKEN": "crm-secret",
	}))
	if err != nil {
		t.Fatal(err)
	}
	l := cfg.File.Limits
	if cfg.File.Templates.OverrideDir != "/tmp/tmpl" || l.HTTP.MaxBodyBytes != 1<<20 || l.HTTP.MaxDocumentBytes != 2048 ||
		l.HistoryBudget != 5000 || l.MaxRunningPerUser != 9 || l.Actions.HTTPTimeout != 5*time.Second || l.Retention != 72*time.Hour ||
		l.LeaseTTL != 4*time.Second {
		t.Errorf("file config = %+v", cfg.File)
	}
	if len(cfg.Actions.Connections) != 1 || cfg.Actions.Connections[0].Label != "crm" {
		t.Errorf("actions config = %+v", cfg.Actions)
	}

	short := filepath.Join(t.TempDir(), "short.yaml")
	if err := os.WriteFile(short, []byte("limits:\n  leaseTTL: 10ms\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = loadConfig(envOf(map[string]string{"GATEWAY_TOKENS": "a:t", "OPENAI_API_KEY": "k", "GATEWAY_CONFIG": short}))
	if err == nil || !strings.Contains(err.Error(), "leaseTTL must be at least 300ms") {
		t.Errorf("a 10ms leaseTTL was accepted: %v", err)
	}

	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("limitz: {}\nconnections:\n  - user: a\n    labl: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = loadConfig(envOf(map[string]string{"GATEWAY_TOKENS": "a:t", "OPENAI_API_KEY": "k", "GATEWAY_CONFIG": bad}))
	if err == nil || !strings.Contains(err.Error(), "limitz") || !strings.Contains(err.Error(), "labl") {
		t.Errorf("unknown keys not reported: %v", err)
	}
}
