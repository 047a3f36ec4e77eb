package openapi

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/twostep/twostep/actions"
	"github.com/twostep/twostep/workflow"
)

// SourceConfig is one entry of the openapiActions section.
type SourceConfig struct {
	// Name is the first part of the action names, <name>.<operationId>.
	Name string `yaml:"name"`
	// Spec is the document: a file path (relative to the config file's
	// folder) or an http(s) URL.
	Spec string `yaml:"spec"`
	// BaseURL is where calls go; empty means the document's first server.
	BaseURL string `yaml:"baseURL"`
	// Headers are sent with every call; ${NAME} values are secrets.
	Headers map[string]string `yaml:"headers"`
	// Connection, when set, adds the headers of the caller's connection of
	// this label to every call.
	Connection string `yaml:"connection"`
	// Include lists the operationIds offered (empty: all).
	Include []string `yaml:"include"`
	// Effects overrides the effect of operations by operationId (default:
	// GET and HEAD read, every other method writes).
	Effects map[string]workflow.Effect `yaml:"effects"`
	// Timeout bounds one call; 0 means the actions limits' httpTimeout.
	Timeout time.Duration `yaml:"timeout"`
	// Refresh is how often a URL document is fetched again (0: 5m).
	Refresh time.Duration `yaml:"refresh"`

	secrets []string
}

// DefaultRefresh is how often a URL document is fetched again by default.
const DefaultRefresh = 5 * time.Minute

// Config is the openapiActions section of the GATEWAY_CONFIG file.
type Config struct {
	Sources []SourceConfig
}

// Secrets returns every secret the section holds: resolved ${NAME} values
// and the whole value of credential headers, for the redactor.
func (c Config) Secrets() []string {
	var out []string
	for _, s := range c.Sources {
		out = append(out, s.secrets...)
		out = append(out, actions.HeaderSecrets(s.Headers)...)
	}
	return out
}

// Names returns the configured sources' names.
func (c Config) Names() []string {
	out := make([]string, 0, len(c.Sources))
	for _, s := range c.Sources {
		out = append(out, s.Name)
	}
	return out
}

// shownSpec is the spec as errors, logs and /readyz show it: a URL without
// its user information and query, where a token for the document's server
// may sit (the fetch sends no configured header).
func (s SourceConfig) shownSpec() string {
	if !s.isURL() {
		return s.Spec
	}
	u, err := url.Parse(s.Spec)
	if err != nil {
		return "the spec URL"
	}
	u.User = nil
	if u.RawQuery != "" {
		u.RawQuery = "…"
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}

// isURL reports whether the spec is fetched over HTTP.
func (s SourceConfig) isURL() bool {
	return strings.HasPrefix(s.Spec, "http://") || strings.HasPrefix(s.Spec, "https://")
}

var sourceNamePattern = regexp.MustCompile(`^[a-z][a-zA-Z0-9_]{0,39}$`)

// ConfigFromYAML decodes the openapiActions section (a zero node when
// absent), resolves ${NAME} references in header values through lookupEnv,
// makes relative spec paths relative to dir (the config file's folder) and
// checks every entry, reporting every problem at once as one KindInvalid
// error that never quotes a resolved value. Unknown keys are problems.
func ConfigFromYAML(node *yaml.Node, dir string, lookupEnv func(string) (string, bool)) (Config, error) {
	var cfg Config
	if node == nil || node.Kind == 0 {
		return cfg, nil
	}
	var problems []string
	raw, err := yaml.Marshal(node)
	if err == nil {
		dec := yaml.NewDecoder(bytes.NewReader(raw))
		dec.KnownFields(true)
		if err = dec.Decode(&cfg.Sources); errors.Is(err, io.EOF) {
			err = nil
		}
	}
	if err != nil {
		problems = append(problems, "openapiActions: "+err.Error())
	}
	if lookupEnv == nil {
		lookupEnv = func(string) (string, bool) { return "", false }
	}
	seen := map[string]bool{}
	for i := range cfg.Sources {
		s := &cfg.Sources[i]
		where := fmt.Sprintf("openapiActions[%d]", i)
		s.Headers, s.secrets, problems = actions.ExpandHeaders(where, s.Headers, lookupEnv, problems)
		problems = append(problems, s.problems(where, seen)...)
		seen[s.Name] = true
		if s.Spec != "" && !s.isURL() && !filepath.IsAbs(s.Spec) && dir != "" {
			s.Spec = filepath.Join(dir, s.Spec)
		}
	}
	if len(problems) > 0 {
		return Config{}, workflow.Errorf(workflow.KindInvalid, "invalid openapiActions configuration:\n- %s", strings.Join(problems, "\n- "))
	}
	return cfg, nil
}

// problems checks one entry; seen holds the names before it.
func (s SourceConfig) problems(where string, seen map[string]bool) []string {
	var problems []string
	switch {
	case !sourceNamePattern.MatchString(s.Name):
		problems = append(problems, fmt.Sprintf("%s: name %q must be a lower-case letter then up to 39 letters, digits or '_'", where, s.Name))
	case seen[s.Name]:
		problems = append(problems, fmt.Sprintf("%s: name %q is used twice", where, s.Name))
	case s.Name == "mcp" || slices.Contains([]string{"http", "document", "ai", "workflow"}, s.Name):
		problems = append(problems, fmt.Sprintf("%s: name %q is taken by the gateway's own actions", where, s.Name))
	}
	if s.Spec == "" {
		problems = append(problems, where+": spec (a file path or an http(s) URL) is required")
	} else if u, err := url.Parse(s.Spec); s.isURL() && (err != nil || u.Host == "") {
		problems = append(problems, fmt.Sprintf("%s: spec %q is not a usable URL", where, s.Spec))
	}
	if s.BaseURL != "" {
		if u, err := url.Parse(s.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" {
			problems = append(problems, fmt.Sprintf("%s: baseURL %q must be an http(s) URL without credentials or query", where, s.BaseURL))
		}
	}
	for id, e := range s.Effects {
		if e != workflow.EffectRead && e != workflow.EffectWrite {
			problems = append(problems, fmt.Sprintf("%s: effects.%s %q must be read or write", where, id, e))
		}
	}
	if s.Timeout < 0 || s.Refresh < 0 {
		problems = append(problems, where+": timeout and refresh must not be negative")
	}
	if s.Refresh > 0 && !s.isURL() {
		problems = append(problems, where+": refresh applies only to a spec fetched from an http(s) URL")
	}
	return append(problems, actions.HeaderProblems(where, s.Headers)...)
}
