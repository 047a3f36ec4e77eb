package mcp

import (
	"slices"
	"strings"
	"testing"
)

func TestLoadConfig(t *testing.T) {
	t.Parallel()
	env := map[string]string{"CRM_TOKEN": "tok-123456", "API_KEY": "key-abcdef"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	cfg, err := LoadConfig(strings.NewReader(`
mcpServers:
  - name: files
    command: node
    args: [server.js, stdio]
    env: {TOKEN: "${CRM_TOKEN}", MODE: plain}
    timeout: 5s
  - name: remote
    url: http://127.0.0.1:9/mcp
    headers: {Authorization: "Bearer ${API_KEY}"}
    user: alice
other: ignored
`), lookup)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Servers) != 2 || cfg.Servers[0].Env["TOKEN"] != "tok-123456" || cfg.Servers[1].Headers["Authorization"] != "Bearer key-abcdef" || cfg.Servers[1].User != "alice" {
		t.Errorf("servers = %+v", cfg.Servers)
	}
	if got := cfg.Secrets(); !slices.Contains(got, "tok-123456") || !slices.Contains(got, "key-abcdef") ||
		!slices.Contains(got, "Bearer key-abcdef") || slices.Contains(got, "plain") {
		t.Errorf("Secrets = %q", got)
	}
}

func TestLoadConfigProblems(t *testing.T) {
	t.Parallel()
	_, err := LoadConfig(strings.NewReader(`
mcpServers:
  - name: Bad.Name
    command: x
  - name: dup
    command: x
  - name: dup
    url: ftp://host/x
  - name: neither
  - name: both
    command: x
    url: http://h/
  - name: envless
    command: x
    env: {K: "${MISSING}"}
  - name: typo
    comand: x
`), func(string) (string, bool) { return "", false })
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	// A key typo stops decoding before the other checks.
	if !strings.Contains(msg, "comand") {
		t.Errorf("unknown key not reported: %s", msg)
	}
	_, err = LoadConfig(strings.NewReader(`
mcpServers:
  - {name: Bad.Name, command: x}
  - {name: dup, command: x}
  - {name: dup, url: "ftp://host/x"}
  - {name: neither}
  - {name: both, command: x, url: "http://h/"}
  - {name: envless, command: x, env: {K: "${MISSING}"}}
  - {name: hdr, command: x, headers: {A: b}}
  - {name: short, command: x, env: {K: "${SHORT}"}}
  - {name: weak, url: "http://h/", headers: {Authorization: "Bearer abc"}}
  - {name: broken, url: "http://h/", headers: {X-Key: "${OOPS"}}
`), func(k string) (string, bool) { return map[string]string{"SHORT": "abc"}[k], k == "SHORT" })
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`mcpServers[0]: name "Bad.Name" must be`,
		`mcpServers[2]: name "dup" is used by another server`,
		`mcpServers[2]: url must be an absolute http:// or https:// URL`,
		`mcpServers[3]: set command (a stdio server) or url`,
		`mcpServers[4]: set command or url, not both`,
		`mcpServers[5]: env "K": environment variable MISSING is not set`,
		`mcpServers[6]: headers are for url servers`,
		`mcpServers[7]: env "K": environment variable SHORT is 3 characters long`,
		// Headers get the same checks as connections' (actions.HeaderProblems).
		`mcpServers[8]: header "Authorization": the credential is 3 characters long`,
		`mcpServers[9]: header "X-Key": malformed ${NAME} reference`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing problem %q in:\n%s", want, err)
		}
	}
}

func TestServerEnvKeepsGatewaySecretsOut(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-should-not-leak")
	t.Setenv("PATH", "/usr/bin")
	got := serverEnv(map[string]string{"TOKEN": "x"})
	if slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "OPENAI_API_KEY=") }) {
		t.Errorf("the gateway's key reached the server's environment: %q", got)
	}
	if !slices.Contains(got, "PATH=/usr/bin") || !slices.Contains(got, "TOKEN=x") {
		t.Errorf("env = %q, want PATH and TOKEN", got)
	}
}
