package wiring

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigProblemsPlaceEveryProblem: every problem of a broken file names
// the file and its line, in line order, and a variable unset in three
// places (a connection's header, an HTTP action's header, an MCP server's
// env) is one problem listing the places.
func TestConfigProblemsPlaceEveryProblem(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "gateway.yaml")
	yaml := `connections:
  - user: alice
    label: crm
    baseURL: https://crm.example/
    headers:
      Authorization: "Bearer ${GONE_TOKEN}"
httpActions:
  - name: tickets.create
    description: Open a ticket
    url: https://tickets.example/
    headers:
      Authorization: "Bearer ${GONE_TOKEN}"
mcpServers:
  - name: files
    command: /bin/true
    env:
      TOKEN: "${GONE_TOKEN}"
limits:
  workres: 3
`
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadConfig(envOf(map[string]string{"LLM_PROVIDER": "scripted", "GATEWAY_INSECURE_DEV": "1", "GATEWAY_CONFIG": file}))
	if err == nil {
		t.Fatal("the broken file was accepted")
	}
	var lines []string
	for l := range strings.Lines(err.Error()) {
		if l, ok := strings.CutPrefix(strings.TrimSpace(l), "- "); ok {
			lines = append(lines, l)
		}
	}
	want := []string{
		"GATEWAY_CONFIG " + file + ` line 6: environment variable GONE_TOKEN is not set (used at line 6: connections[0]: header "Authorization"; ` +
			`line 12: httpActions[0]: header "Authorization"; line 17: mcpServers[0]: env "TOKEN")`,
		"GATEWAY_CONFIG " + file + ` line 19: limits.workres: unknown key "workres"; did you mean "workers"?`,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}
