package actions

import (
	"fmt"
	"io"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/twostep/twostep/workflow"
	"github.com/twostep/twostep/yamlcheck"
)

// Config is the actions, connections and limits sections of the
// GATEWAY_CONFIG YAML file. LoadConfig reads it; New turns it into a
// Registry. A Config built in code (tests) is used as is: its header values
// are literal, no environment reference is resolved.
type Config struct {
	Connections []ConnectionConfig `yaml:"connections"`
	HTTPActions []HTTPActionConfig `yaml:"httpActions"`
	Limits      Limits             `yaml:"limits"`
}

// ConnectionConfig declares one connection of one user. Header values may
// reference environment variables as ${NAME}; LoadConfig resolves them and
// remembers the resolved values as secrets.
type ConnectionConfig struct {
	User  string `yaml:"user"`
	Label string `yaml:"label"`
	// Kind is "http" (the only kind); empty means "http".
	Kind        string            `yaml:"kind"`
	BaseURL     string            `yaml:"baseURL"`
	Description string            `yaml:"description"`
	Headers     map[string]string `yaml:"headers"`
	// Timeout bounds one request through this connection; 0 means
	// Limits.HTTPTimeout.
	Timeout time.Duration `yaml:"timeout"`

	// secrets are the values substituted for ${NAME} references.
	secrets []string
}

// HTTPActionConfig declares an action served by an HTTP endpoint: by
// default the gateway sends {parameters, documents, connection,
// idempotencyKey} to URL with Method (POST) and reads back {text,
// documents} or any other 2xx body (DESIGN §10.2); with Body "parameters"
// it sends the parameters themselves.
type HTTPActionConfig struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	// Parameters is the JSON Schema of the business parameters, written as
	// YAML. Empty means an object with no parameters.
	Parameters map[string]any `yaml:"parameters"`
	// URL may hold {name} placeholders in its path, filled (escaped) from
	// the required parameter of that name.
	URL string `yaml:"url"`
	// Method is the HTTP method; empty means POST.
	Method string `yaml:"method"`
	// Body is "envelope" (the default: {parameters, documents, connection,
	// idempotencyKey}) or "parameters": the parameters not used in the URL
	// are the JSON body (for GET, HEAD and DELETE: the query).
	Body string `yaml:"body"`
	// Effect is "read" or "write"; empty means "write".
	Effect workflow.Effect `yaml:"effect"`
	// Timeout bounds one call; 0 means Limits.HTTPTimeout.
	Timeout time.Duration `yaml:"timeout"`
	// Documents is "none", "optional" or "required"; empty means "optional".
	Documents workflow.DocumentNeed `yaml:"documents"`
	// ConnectionKind is the kind of connection the action accepts ("" for
	// none); ConnectionRequired makes one mandatory. Only the connection's
	// label is sent to the action's URL, never its secrets.
	ConnectionKind     string `yaml:"connectionKind"`
	ConnectionRequired bool   `yaml:"connectionRequired"`
	// Headers are sent with every call to URL (for the action service's own
	// credentials); values may reference ${NAME} like connection headers.
	Headers map[string]string `yaml:"headers"`

	secrets []string
}

// Limits bound what actions may fetch and produce. Zero values mean the
// defaults in DefaultLimits. The YAML keys are unique across the file's
// limits section, which other packages' limits share.
type Limits struct {
	// HTTPTimeout bounds one outgoing HTTP request.
	HTTPTimeout time.Duration `yaml:"httpTimeout"`
	// MaxResponseBytes caps an HTTP reply; a larger reply is a step failure.
	MaxResponseBytes int64 `yaml:"maxResponseBytes"`
	// MaxDocumentBytes caps one document an action produces. Its YAML key
	// names actions because the gateway inlines this struct next to
	// httpapi's upload limits in one limits section.
	MaxDocumentBytes int64 `yaml:"maxActionDocumentBytes"`
	// MaxModelInputChars caps the document text ai.process sends to the model.
	MaxModelInputChars int `yaml:"maxModelInputChars"`
	// ModelMaxTokens bounds ai.process's reply; 0 means the model's default.
	ModelMaxTokens int `yaml:"modelMaxTokens"`
}

// DefaultLimits returns the limits used where Limits leaves a zero value:
// 30s per HTTP request, 10 MiB per reply and per produced document, 200,000
// characters of document text per ai.process call, the model's own default
// reply length.
func DefaultLimits() Limits {
	return Limits{
		HTTPTimeout:        30 * time.Second,
		MaxResponseBytes:   10 << 20,
		MaxDocumentBytes:   10 << 20,
		MaxModelInputChars: 200_000,
	}
}

// withDefaults fills every zero limit from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.HTTPTimeout <= 0 {
		l.HTTPTimeout = d.HTTPTimeout
	}
	if l.MaxResponseBytes <= 0 {
		l.MaxResponseBytes = d.MaxResponseBytes
	}
	if l.MaxDocumentBytes <= 0 {
		l.MaxDocumentBytes = d.MaxDocumentBytes
	}
	if l.MaxModelInputChars <= 0 {
		l.MaxModelInputChars = d.MaxModelInputChars
	}
	return l
}

// fileSections is the part of the YAML file this package reads; other
// top-level keys (templates, ...) belong to other packages and are ignored.
type fileSections struct {
	Connections yaml.Node `yaml:"connections"`
	HTTPActions yaml.Node `yaml:"httpActions"`
	Limits      Limits    `yaml:"limits"`
}

// LoadConfig reads the YAML file's connections, httpActions and limits,
// resolves ${NAME} references in header values through lookupEnv, and checks
// every entry. It reports every problem at once, as one KindInvalid error
// with one line per problem; no problem ever quotes a resolved secret. An
// empty file is an empty Config. Unknown keys inside connections and
// httpActions entries are problems (typos would otherwise be silent).
func LoadConfig(r io.Reader, lookupEnv func(string) (string, bool)) (Config, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return Config{}, workflow.WrapKind(workflow.KindInvalid, err, "actions.LoadConfig: cannot read the config file")
	}
	var sections fileSections
	if err := yaml.Unmarshal(data, &sections); err != nil {
		return Config{}, workflow.WrapKind(workflow.KindInvalid, err, "actions.LoadConfig: the config file is not valid YAML")
	}
	return ConfigFromYAML(&sections.Connections, &sections.HTTPActions, sections.Limits, lookupEnv)
}

// ConfigFromYAML is LoadConfig for a file already decoded once by its
// caller: the connections and httpActions sections as YAML nodes (zero
// nodes when absent) and the limits section decoded.
func ConfigFromYAML(connections, httpActions *yaml.Node, limits Limits, lookupEnv func(string) (string, bool)) (cfg Config, err error) {
	defer workflow.Wrap(&err, "actions.LoadConfig")
	var problems []string
	problems = append(problems, decodeStrict(connections, "connections", &cfg.Connections)...)
	problems = append(problems, decodeStrict(httpActions, "httpActions", &cfg.HTTPActions)...)
	cfg.Limits = limits
	if lookupEnv == nil {
		lookupEnv = func(string) (string, bool) { return "", false }
	}
	for i := range cfg.Connections {
		c := &cfg.Connections[i]
		where := fmt.Sprintf("connections[%d]", i)
		c.Headers, c.secrets, problems = ExpandHeaders(where, c.Headers, lookupEnv, problems)
	}
	for i := range cfg.HTTPActions {
		a := &cfg.HTTPActions[i]
		where := fmt.Sprintf("httpActions[%d]", i)
		a.Headers, a.secrets, problems = ExpandHeaders(where, a.Headers, lookupEnv, problems)
	}
	problems = append(problems, cfg.problems()...)
	if len(problems) > 0 {
		return Config{}, invalidConfig(problems)
	}
	return cfg, nil
}

// decodeStrict decodes one YAML section (path is its key) into out and
// returns its problems: unknown keys with a suggestion and values of the
// wrong kind, each with its line in the file and its key path.
func decodeStrict(node *yaml.Node, path string, out any) []string {
	return yamlcheck.Strings(yamlcheck.Decode(node, path, out))
}

// invalidConfig turns a list of problems into one KindInvalid error whose
// message lists them all.
func invalidConfig(problems []string) error {
	msg := "invalid actions configuration:"
	for _, p := range problems {
		msg += "\n- " + p
	}
	return workflow.Errorf(workflow.KindInvalid, "%s", msg)
}
