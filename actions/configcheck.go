package actions

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/twostep/twostep/redact"
	"github.com/twostep/twostep/workflow"
)

var (
	envRefPattern     = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)
	actionNamePattern = regexp.MustCompile(`^[a-z][a-zA-Z0-9_]*\.[a-z][a-zA-Z0-9_]*$`)
	labelPattern      = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)
	headerNamePattern = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
)

// KindHTTP is the only connection kind: an HTTP API under a base URL.
const KindHTTP = "http"

// ExpandHeaders resolves ${NAME} references in header values (connections,
// HTTP actions and MCP servers share it). It returns the
// resolved headers, the substituted values (secrets) and problems extended
// with what went wrong. A problem names the header and the variable, never a
// value.
func ExpandHeaders(where string, headers map[string]string, lookupEnv func(string) (string, bool), problems []string) (map[string]string, []string, []string) {
	if len(headers) == 0 {
		return headers, nil, problems
	}
	out := make(map[string]string, len(headers))
	var secrets []string
	for _, name := range slices.Sorted(maps.Keys(headers)) {
		value := headers[name]
		unset := false
		resolved := envRefPattern.ReplaceAllStringFunc(value, func(ref string) string {
			varName := envRefPattern.FindStringSubmatch(ref)[1]
			v, ok := lookupEnv(varName)
			switch {
			case !ok:
				unset = true
				problems = append(problems, fmt.Sprintf("%s: header %q: environment variable %s is not set", where, name, varName))
			case v == "":
				unset = true
				problems = append(problems, fmt.Sprintf("%s: header %q: environment variable %s is empty", where, name, varName))
			default:
				// Credential headers are checked whole by HeaderProblems.
				if msg := redact.CheckSecret(v); msg != "" && !isCredentialHeader(name) {
					problems = append(problems, fmt.Sprintf("%s: header %q: environment variable %s %s", where, name, varName, msg))
				}
				secrets = append(secrets, v)
			}
			return v
		})
		if strings.Contains(envRefPattern.ReplaceAllString(value, ""), "${") {
			problems = append(problems, fmt.Sprintf("%s: header %q: malformed ${NAME} reference", where, name))
		}
		if unset {
			// One problem per unset variable: the header is left out, so
			// the checks of its value do not report the gap again.
			continue
		}
		if resolved != value {
			secrets = append(secrets, resolved)
		}
		out[name] = resolved
	}
	return out, secrets, problems
}

// problems checks every entry of cfg and returns one line per problem.
func (cfg Config) problems() []string {
	var problems []string
	seen := map[string]bool{}
	for i, c := range cfg.Connections {
		where := fmt.Sprintf("connections[%d]", i)
		if c.User == "" {
			problems = append(problems, where+": user is required")
		}
		if !labelPattern.MatchString(c.Label) {
			problems = append(problems, fmt.Sprintf("%s: label %q must be 1-64 letters, digits, '.', '_' or '-'", where, c.Label))
		}
		key := c.User + "\x00" + c.Label
		if seen[key] {
			problems = append(problems, fmt.Sprintf("%s: user %q already has a connection labelled %q", where, c.User, c.Label))
		}
		seen[key] = true
		if c.Kind != KindHTTP && c.Kind != "" {
			problems = append(problems, fmt.Sprintf("%s: kind %q is not supported (only %q)", where, c.Kind, KindHTTP))
		}
		if err := checkBaseURL(c.BaseURL); err != "" {
			problems = append(problems, where+": baseURL "+err)
		}
		if c.Timeout < 0 {
			problems = append(problems, where+": timeout must not be negative")
		}
		problems = append(problems, HeaderProblems(where, c.Headers)...)
	}
	names := map[string]bool{}
	for _, b := range builtinNames() {
		names[b] = true
	}
	for i, a := range cfg.HTTPActions {
		problems = append(problems, a.problems(fmt.Sprintf("httpActions[%d]", i), names)...)
		names[a.Name] = true
	}
	return problems
}

// problems checks one HTTP action; names holds the names taken before it.
func (a HTTPActionConfig) problems(where string, names map[string]bool) []string {
	var problems []string
	switch {
	case !actionNamePattern.MatchString(a.Name):
		problems = append(problems, fmt.Sprintf("%s: name %q must be method.action (letters, digits, '_')", where, a.Name))
	case names[a.Name]:
		problems = append(problems, fmt.Sprintf("%s: action %q is already registered", where, a.Name))
	}
	if strings.TrimSpace(a.Description) == "" {
		problems = append(problems, where+": description is required (the model chooses actions by it)")
	}
	if err := checkBaseURL(a.URL); err != "" {
		problems = append(problems, where+": url "+err)
	}
	if a.Effect != "" && a.Effect != workflow.EffectRead && a.Effect != workflow.EffectWrite {
		problems = append(problems, fmt.Sprintf("%s: effect %q must be read or write", where, a.Effect))
	}
	switch a.Documents {
	case "", workflow.DocumentsNone, workflow.DocumentsOptional, workflow.DocumentsRequired:
	default:
		problems = append(problems, fmt.Sprintf("%s: documents %q must be none, optional or required", where, a.Documents))
	}
	if a.ConnectionKind != "" && a.ConnectionKind != KindHTTP {
		problems = append(problems, fmt.Sprintf("%s: connectionKind %q is not supported (only %q)", where, a.ConnectionKind, KindHTTP))
	}
	if a.ConnectionRequired && a.ConnectionKind == "" {
		problems = append(problems, where+": connectionRequired needs a connectionKind")
	}
	if a.Timeout < 0 {
		problems = append(problems, where+": timeout must not be negative")
	}
	if _, err := compileSchema(a.Name, a.Parameters); err != nil {
		problems = append(problems, where+": parameters: "+err.Error())
	}
	problems = append(problems, a.requestProblems(where)...)
	return append(problems, HeaderProblems(where, a.Headers)...)
}

// Bodies of a declared HTTP action (HTTPActionConfig.Body).
const (
	BodyEnvelope   = "envelope"
	BodyParameters = "parameters"
)

// httpMethods are the methods a declared HTTP action may use.
var httpMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// requestProblems checks method, body and the URL's {name} placeholders:
// each names a required parameter, and only in the path.
func (a HTTPActionConfig) requestProblems(where string) []string {
	var problems []string
	method := strings.ToUpper(a.Method)
	if a.Method != "" && !slices.Contains(httpMethods, method) {
		problems = append(problems, fmt.Sprintf("%s: method %q must be one of %s", where, a.Method, strings.Join(httpMethods, ", ")))
	}
	switch a.Body {
	case "", BodyEnvelope:
		if method == http.MethodGet || method == http.MethodHead {
			problems = append(problems, fmt.Sprintf("%s: method %s sends no body, so not the {parameters, documents, ...} envelope: add body: parameters to send the parameters as the query", where, method))
		}
	case BodyParameters:
		if a.Documents == workflow.DocumentsOptional || a.Documents == workflow.DocumentsRequired {
			problems = append(problems, where+": documents cannot be sent with body: parameters (only the envelope carries them)")
		}
		if a.ConnectionKind != "" {
			problems = append(problems, where+": connectionKind cannot be used with body: parameters (only the envelope carries the connection's label)")
		}
	default:
		problems = append(problems, fmt.Sprintf("%s: body %q must be envelope or parameters", where, a.Body))
	}
	u, err := url.Parse(a.URL)
	if err != nil || strings.ContainsAny(u.Host, "{}") || strings.ContainsAny(u.RawQuery, "{}") {
		if !strings.ContainsAny(a.URL, "{}") {
			return problems
		}
		return append(problems, where+": url placeholders {name} are allowed only in the path")
	}
	props, _ := a.Parameters["properties"].(map[string]any)
	required, _ := a.Parameters["required"].([]any)
	for _, m := range placeholderPattern.FindAllStringSubmatch(u.Path, -1) {
		switch {
		case props[m[1]] == nil:
			problems = append(problems, fmt.Sprintf("%s: url placeholder {%s} names no parameter: declare it under parameters.properties", where, m[1]))
		case !slices.Contains(required, any(m[1])):
			problems = append(problems, fmt.Sprintf("%s: url placeholder {%s} must be a required parameter", where, m[1]))
		}
	}
	return problems
}

// checkBaseURL returns why raw is not a usable absolute http(s) URL, or "".
func checkBaseURL(raw string) string {
	u, err := url.Parse(raw)
	switch {
	case raw == "":
		return "is required"
	case err != nil:
		return "is not a URL"
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Sprintf("%q must start with http:// or https://", raw)
	case u.Host == "":
		return fmt.Sprintf("%q has no host", raw)
	case u.User != nil:
		return "must not carry credentials: put them in headers with ${NAME} references"
	case u.RawQuery != "" || u.Fragment != "":
		return fmt.Sprintf("%q must not have a query or fragment", raw)
	}
	return ""
}

// HeaderProblems checks header names, that no value can split a header, and
// that a credential header's secret is long enough to redact (connections,
// HTTP actions and MCP servers share it).
func HeaderProblems(where string, headers map[string]string) []string {
	var problems []string
	for _, name := range slices.Sorted(maps.Keys(headers)) {
		if !headerNamePattern.MatchString(name) {
			problems = append(problems, fmt.Sprintf("%s: header name %q is not valid", where, name))
		}
		if strings.ContainsAny(headers[name], "\r\n\x00") {
			problems = append(problems, fmt.Sprintf("%s: header %q: value contains a line break or NUL", where, name))
		}
		// A credential too short to redact safely would leak or mangle text.
		if isCredentialHeader(name) {
			for _, secret := range credentialParts(headers[name]) {
				if msg := redact.CheckSecret(secret); msg != "" {
					problems = append(problems, fmt.Sprintf("%s: header %q: the credential %s", where, name, msg))
				}
			}
		}
	}
	return problems
}
