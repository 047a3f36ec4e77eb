package actions

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/twostep/twostep/workflow"
)

// env returns a lookup func over a fixed map: tests never read os.Getenv.
func env(vars map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

const validYAML = `
templates:            # another package's section: ignored here
  stage1: custom.tmpl
connections:
  - user: alice
    label: crm
    kind: http
    baseURL: https://crm.example.com/api/v2/
    description: Alice's CRM
    headers:
      Authorization: "Bearer ${CRM_TOKEN}"
      Accept: application/json
    timeout: 5s
httpActions:
  - name: crm.lookup
    description: Look a customer up
    url: https://actions.example.com/lookup
    effect: read
    timeout: 2s
    documents: none
    connectionKind: http
    headers:
      X-Api-Key: "${ACTIONS_KEY}"
    parameters:
      type: object
      properties:
        customerId: {type: string}
        limit: {type: integer, minimum: 1}
      required: [customerId]
limits:
  httpTimeout: 7s
  maxResponseBytes: 1024
  maxActionDocumentBytes: 2048
  maxUploadBytes: 99        # httpapi's upload limit, shares the section
  historyBudget: 5000       # another package's limit
`

func TestLoadConfigValid(t *testing.T) {
	t.Parallel()
	cfg, err := LoadConfig(strings.NewReader(validYAML), env(map[string]string{
		"CRM_TOKEN": "tok-12345678", "ACTIONS_KEY": "key-45678901",
	}))
	if err != nil {
		t.Fatalf("LoadConfig: %v", err)
	}
	c := cfg.Connections[0]
	if c.User != "alice" || c.Label != "crm" || c.BaseURL != "https://crm.example.com/api/v2/" || c.Timeout != 5*time.Second {
		t.Errorf("connection = %+v", c)
	}
	if got, want := c.Headers["Authorization"], "Bearer tok-12345678"; got != want {
		t.Errorf("Authorization = %q, want %q", got, want)
	}
	a := cfg.HTTPActions[0]
	if a.Effect != workflow.EffectRead || a.Timeout != 2*time.Second || a.Documents != workflow.DocumentsNone {
		t.Errorf("http action = %+v", a)
	}
	if cfg.Limits.HTTPTimeout != 7*time.Second || cfg.Limits.MaxResponseBytes != 1024 || cfg.Limits.MaxDocumentBytes != 2048 {
		t.Errorf("limits = %+v", cfg.Limits)
	}

	r := mustNew(t, cfg, nil)
	wantSecrets := []string{"Bearer tok-12345678", "key-45678901", "tok-12345678"}
	if diff := cmp.Diff(wantSecrets, r.Secrets()); diff != "" {
		t.Errorf("Secrets (-want +got):\n%s", diff)
	}
	spec, ok := r.Action("crm.lookup")
	if !ok {
		t.Fatal("crm.lookup not registered")
	}
	if got := r.ValidateParameters("crm.lookup", map[string]any{"customerId": "c1", "limit": 0.0}); len(got) != 1 || !strings.HasPrefix(got[0], "/limit: ") {
		t.Errorf("YAML schema not enforced: %q", got)
	}
	if spec.ConnectionKind != KindHTTP || spec.ConnectionRequired || spec.Effect != workflow.EffectRead {
		t.Errorf("spec = %+v", spec)
	}
}

func TestLoadConfigEmpty(t *testing.T) {
	t.Parallel()
	cfg, err := LoadConfig(strings.NewReader(""), nil)
	if err != nil {
		t.Fatalf("LoadConfig(empty): %v", err)
	}
	if len(cfg.Connections) != 0 || len(cfg.HTTPActions) != 0 {
		t.Errorf("cfg = %+v, want empty", cfg)
	}
}

func TestLoadConfigReportsEveryProblem(t *testing.T) {
	t.Parallel()
	const bad = `
connections:
  - user: alice
    label: crm
    kind: http
    baseURL: https://crm.example.com
    headers:
      Authorization: "Bearer ${CRM_TOKEN}"
      X-Other: "${MISSING_VAR}"
  - user: alice
    label: crm
    kind: ftp
    baseURL: ftp://files.example.com
  - user: ""
    label: "bad label!"
    kind: http
    baseURL: https://user:pw@example.com
  - user: bob
    label: erp
    kind: http
    baseUrl: https://typo.example.com
httpActions:
  - name: ai.process
    description: clash with a built-in
    url: https://a.example.com
  - name: NoDot
    url: /relative
    effect: delete
    documents: many
    parameters:
      type: object
      properties:
        documentList: {type: array}
`
	_, err := LoadConfig(strings.NewReader(bad), env(map[string]string{"CRM_TOKEN": "SECRET-MARKER-1"}))
	wantKind(t, err, workflow.KindInvalid)
	msg := err.Error()
	for _, want := range []string{
		"environment variable MISSING_VAR is not set",
		`user "alice" already has a connection labelled "crm"`,
		`kind "ftp" is not supported`,
		"user is required",
		`label "bad label!"`,
		"must not carry credentials",
		`line 21: connections[3].baseUrl: unknown key "baseUrl"; did you mean "baseURL"?`,
		`action "ai.process" is already registered`,
		`name "NoDot" must be method.action`,
		`url "/relative" must start with http://`,
		`effect "delete" must be read or write`,
		`documents "many" must be none, optional or required`,
		`property "documentList" is reserved`,
		"description is required",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if n := strings.Count(msg, "MISSING_VAR"); n != 1 {
		t.Errorf("the unset variable is %d problems, want 1:\n%s", n, msg)
	}
	if strings.Contains(msg, "actions.HTTPActionConfig") || strings.Contains(msg, "ConnectionConfig") {
		t.Errorf("error names a Go type:\n%s", msg)
	}
	if strings.Contains(msg, "SECRET-MARKER-1") {
		t.Errorf("error quotes a resolved secret:\n%s", msg)
	}
}

func TestLoadConfigInvalidYAML(t *testing.T) {
	t.Parallel()
	_, err := LoadConfig(strings.NewReader("connections: [unclosed"), nil)
	wantKind(t, err, workflow.KindInvalid)
}

func TestNewChecksConfigBuiltInCode(t *testing.T) {
	t.Parallel()
	_, err := New(Config{HTTPActions: []HTTPActionConfig{{
		Name: "document.extract", Description: "dup", URL: "http://127.0.0.1:1/x",
	}}}, nil)
	wantKind(t, err, workflow.KindInvalid)
	if !strings.Contains(err.Error(), `action "document.extract" is already registered`) {
		t.Errorf("err = %v", err)
	}
}

func TestSchemaRefusesExternalReferences(t *testing.T) {
	t.Parallel()
	for _, ref := range []string{"https://schemas.example.com/customer.json", "file:///etc/passwd", "other.json"} {
		_, err := New(Config{HTTPActions: []HTTPActionConfig{{
			Name: "crm.lookup", Description: "x", URL: "http://127.0.0.1:1/x",
			Parameters: map[string]any{"type": "object", "properties": map[string]any{"c": map[string]any{"$ref": ref}}},
		}}}, nil)
		wantKind(t, err, workflow.KindInvalid)
		if !strings.Contains(err.Error(), "httpActions[0]: parameters:") {
			t.Errorf("%s: err = %v", ref, err)
		}
	}
	// A reference inside the schema itself is fine.
	r := mustNew(t, Config{HTTPActions: []HTTPActionConfig{{
		Name: "crm.lookup", Description: "x", URL: "http://127.0.0.1:1/x",
		Parameters: map[string]any{
			"type":       "object",
			"$defs":      map[string]any{"id": map[string]any{"type": "string", "pattern": "^c[0-9]+$"}},
			"properties": map[string]any{"c": map[string]any{"$ref": "#/$defs/id"}},
		},
	}}}, nil)
	if got := r.ValidateParameters("crm.lookup", map[string]any{"c": "x1"}); len(got) != 1 || !strings.HasPrefix(got[0], "/c: ") {
		t.Errorf("internal $ref not enforced: %q", got)
	}
}

// TestLimitsInlineWithOtherSections guards the gateway's use: it inlines
// Limits next to other packages' limits in one struct, which yaml.v3 refuses
// when two inlined structs share a key.
func TestLimitsInlineWithOtherSections(t *testing.T) {
	t.Parallel()
	var file struct {
		Limits struct {
			Actions       Limits `yaml:",inline"`
			Upload        int64  `yaml:"maxUploadBytes"`
			HistoryBudget int    `yaml:"historyBudget"`
		} `yaml:"limits"`
	}
	err := yaml.Unmarshal([]byte("limits: {httpTimeout: 3s, maxUploadBytes: 7, maxActionDocumentBytes: 9}"), &file)
	if err != nil {
		t.Fatalf("Unmarshal: %v", err)
	}
	if file.Limits.Actions.HTTPTimeout != 3*time.Second || file.Limits.Upload != 7 || file.Limits.Actions.MaxDocumentBytes != 9 {
		t.Errorf("limits = %+v", file.Limits)
	}
}
