package mcp

import (
	"fmt"
	"io"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/twostep/twostep/actions"
	"github.com/twostep/twostep/redact"
	"github.com/twostep/twostep/workflow"
	"github.com/twostep/twostep/yamlcheck"
)

// ServerConfig declares one MCP server: either Command (stdio) or URL
// (streamable HTTP). Env and Headers values may reference environment
// variables as ${NAME}; LoadConfig resolves them and remembers the resolved
// values as secrets.
type ServerConfig struct {
	// Name is the middle part of the action names, mcp.<name>.<tool>.
	Name    string            `yaml:"name"`
	Command string            `yaml:"command"`
	Args    []string          `yaml:"args"`
	Env     map[string]string `yaml:"env"`
	URL     string            `yaml:"url"`
	Headers map[string]string `yaml:"headers"`
	// User, when set, is the only user who sees and may run the tools.
	User string `yaml:"user"`
	// Timeout bounds one tools/call; 0 means DefaultCallTimeout.
	Timeout time.Duration `yaml:"timeout"`

	secrets []string
}

// Config is the mcpServers section of the GATEWAY_CONFIG file.
type Config struct {
	Servers []ServerConfig
}

// DefaultCallTimeout bounds a tools/call when the server sets no timeout.
const DefaultCallTimeout = 60 * time.Second

var (
	serverNamePattern = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,39}$`)
	envRefPattern     = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)
	envNamePattern    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// section is the part of the YAML file this package reads.
type section struct {
	MCPServers yaml.Node `yaml:"mcpServers"`
}

// LoadConfig reads the mcpServers section of the YAML file, resolves ${NAME}
// references in env and header values through lookupEnv and checks every
// entry, reporting every problem at once (one KindInvalid error, one line
// per problem, never quoting a resolved value). Other sections are ignored;
// unknown keys inside an entry are problems.
func LoadConfig(r io.Reader, lookupEnv func(string) (string, bool)) (Config, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return Config{}, workflow.WrapKind(workflow.KindInvalid, err, "cannot read the config file")
	}
	var sec section
	if err := yaml.Unmarshal(data, &sec); err != nil {
		return Config{}, workflow.WrapKind(workflow.KindInvalid, err, "the config file is not valid YAML")
	}
	return ConfigFromYAML(&sec.MCPServers, lookupEnv)
}

// ConfigFromYAML is LoadConfig for a file already decoded once by its
// caller: the mcpServers section as a YAML node (a zero node when absent).
func ConfigFromYAML(servers *yaml.Node, lookupEnv func(string) (string, bool)) (Config, error) {
	var cfg Config
	if servers.Kind == 0 {
		return cfg, nil
	}
	if ps := yamlcheck.Decode(servers, "mcpServers", &cfg.Servers); len(ps) > 0 {
		return Config{}, invalid(yamlcheck.Strings(ps))
	}
	if lookupEnv == nil {
		lookupEnv = func(string) (string, bool) { return "", false }
	}
	var problems []string
	for i := range cfg.Servers {
		s := &cfg.Servers[i]
		where := fmt.Sprintf("mcpServers[%d]", i)
		s.Env, problems = s.expand(where+": env", s.Env, lookupEnv, problems)
		var secrets []string
		s.Headers, secrets, problems = actions.ExpandHeaders(where, s.Headers, lookupEnv, problems)
		s.secrets = append(s.secrets, secrets...)
	}
	problems = append(problems, cfg.Problems()...)
	if len(problems) > 0 {
		return Config{}, invalid(problems)
	}
	return cfg, nil
}

// expand resolves ${NAME} in every env value of m, recording resolved
// values as the server's secrets (headers go through actions.ExpandHeaders).
func (s *ServerConfig) expand(where string, m map[string]string, lookupEnv func(string) (string, bool), problems []string) (map[string]string, []string) {
	if len(m) == 0 {
		return m, problems
	}
	out := make(map[string]string, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := envRefPattern.ReplaceAllStringFunc(m[k], func(ref string) string {
			name := envRefPattern.FindStringSubmatch(ref)[1]
			val, ok := lookupEnv(name)
			if !ok || val == "" {
				problems = append(problems, fmt.Sprintf("%s %q: environment variable %s is not set", where, k, name))
				return ""
			}
			if msg := redact.CheckSecret(val); msg != "" {
				problems = append(problems, fmt.Sprintf("%s %q: environment variable %s %s", where, k, name, msg))
			}
			s.secrets = append(s.secrets, val)
			return val
		})
		out[k] = v
	}
	return out, problems
}

// Problems checks every entry: a name of lower-case letters, digits, '-'
// and '_' (at most 40, starting with a letter), unique; exactly one of
// command and url; args, env only with command; headers only with url; an
// http(s) URL; no negative timeout.
func (c Config) Problems() []string {
	var problems []string
	seen := map[string]bool{}
	for i, s := range c.Servers {
		where := fmt.Sprintf("mcpServers[%d]", i)
		add := func(format string, args ...any) {
			problems = append(problems, where+": "+fmt.Sprintf(format, args...))
		}
		switch {
		case !serverNamePattern.MatchString(s.Name):
			add("name %q must be 1-40 lower-case letters, digits, '-' or '_', starting with a letter", s.Name)
		case seen[s.Name]:
			add("name %q is used by another server", s.Name)
		}
		seen[s.Name] = true
		switch {
		case s.Command == "" && s.URL == "":
			add("set command (a stdio server) or url (a streamable-HTTP server)")
		case s.Command != "" && s.URL != "":
			add("set command or url, not both")
		case s.Command != "" && len(s.Headers) > 0:
			add("headers are for url servers; a command server takes env")
		case s.URL != "" && (len(s.Args) > 0 || len(s.Env) > 0):
			add("args and env are for command servers; a url server takes headers")
		}
		if s.URL != "" {
			if u, err := url.Parse(s.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				add("url must be an absolute http:// or https:// URL")
			}
		}
		for _, k := range slices.Sorted(maps.Keys(s.Env)) {
			if !envNamePattern.MatchString(k) {
				add("env name %q is not a valid variable name", k)
			}
		}
		problems = append(problems, actions.HeaderProblems(where, s.Headers)...)
		if s.Timeout < 0 {
			add("timeout must not be negative")
		}
	}
	return problems
}

// Secrets returns every resolved ${NAME} value of every server and the
// whole value of every credential header (Authorization...), for the
// redactor: an MCP server's credentials never reach a prompt, a trace, a
// log line or a response.
func (c Config) Secrets() []string {
	var out []string
	for _, s := range c.Servers {
		out = append(out, s.secrets...)
		out = append(out, actions.HeaderSecrets(s.Headers)...)
	}
	return out
}

// invalid turns problems into one KindInvalid error listing them all.
func invalid(problems []string) error {
	return workflow.Errorf(workflow.KindInvalid, "invalid mcpServers configuration:\n- %s", strings.Join(problems, "\n- "))
}
