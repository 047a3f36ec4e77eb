package actions

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/twostep/twostep/workflow"
)

// connection is a user's credentialed endpoint. Only public leaves the
// package; headers (the secrets) are attached to outgoing requests only.
type connection struct {
	public  workflow.Connection
	base    *url.URL
	headers http.Header
	timeout time.Duration
}

// buildConnections indexes cfg's connections by user and label and collects
// their secrets. cfg has been checked, so every base URL parses.
func buildConnections(cfg Config) (map[string]map[string]*connection, []string) {
	conns := map[string]map[string]*connection{}
	var secrets []string
	for _, cc := range cfg.Connections {
		base, _ := url.Parse(cc.BaseURL)
		base.Path = strings.TrimSuffix(base.Path, "/")
		base.RawPath = ""
		kind := cc.Kind
		if kind == "" {
			kind = KindHTTP
		}
		c := &connection{
			public:  workflow.Connection{Label: cc.Label, Kind: kind, Description: cc.Description},
			base:    base,
			headers: http.Header{},
			timeout: cc.Timeout,
		}
		for name, v := range cc.Headers {
			c.headers.Set(name, v)
		}
		if conns[cc.User] == nil {
			conns[cc.User] = map[string]*connection{}
		}
		conns[cc.User][cc.Label] = c
		secrets = append(secrets, headerSecrets(cc.Headers, cc.secrets)...)
	}
	return conns, secrets
}

// HeaderSecrets returns what headers hold secret whatever the values'
// origin: the whole value of every credential header (Authorization,
// Cookie, API-key headers...) and, for "Scheme token" values, the token
// alone. Other packages that send configured headers (actions/mcp) list
// them for the redactor.
func HeaderSecrets(headers map[string]string) []string { return headerSecrets(headers, nil) }

// headerSecrets returns resolved (the values substituted for ${NAME}) plus
// the whole value of every header that carries credentials.
func headerSecrets(headers map[string]string, resolved []string) []string {
	out := slices.Clone(resolved)
	for name, v := range headers {
		if isCredentialHeader(name) {
			out = append(out, credentialParts(v)...)
		}
	}
	return out
}

// credentialParts is what a credential header's value holds secret: the
// value and, for "Scheme token" values, the token alone.
func credentialParts(v string) []string {
	out := []string{v}
	if _, token, ok := strings.Cut(v, " "); ok {
		out = append(out, strings.TrimSpace(token))
	}
	return out
}

// isCredentialHeader reports whether a header of this name carries
// credentials whatever its value's origin.
func isCredentialHeader(name string) bool {
	n := strings.ToLower(name)
	switch n {
	case "authorization", "proxy-authorization", "cookie":
		return true
	}
	for _, word := range []string{"key", "token", "secret", "password", "auth"} {
		if strings.Contains(n, word) {
			return true
		}
	}
	return false
}

// normalizeSecrets drops empty values and duplicates, sorted.
func normalizeSecrets(secrets []string) []string {
	var out []string
	for _, s := range secrets {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// scrubString replaces every secret, in every form, in s.
func (r *Registry) scrubString(s string) string { return r.redactor.String(s) }

// scrubResult replaces every secret in the result's text, documents and
// model calls (a remote service may echo the credentials it received).
func (r *Registry) scrubResult(res workflow.ActionResult) workflow.ActionResult {
	if r.redactor.Empty() {
		return res
	}
	res.Text = r.redactor.String(res.Text)
	res.ModelCalls = r.scrubModelCalls(res.ModelCalls)
	for i := range res.Documents {
		d := &res.Documents[i]
		d.Name = r.redactor.String(d.Name)
		if r.redactor.ContainsBytes(d.Content) {
			d.Content = r.redactor.Bytes(d.Content)
			d.Size = int64(len(d.Content))
		}
	}
	return res
}

// scrubModelCalls returns calls with every secret in their prompts,
// responses and errors replaced; calls is left unchanged.
func (r *Registry) scrubModelCalls(calls []workflow.ActionModelCall) []workflow.ActionModelCall {
	if len(calls) == 0 {
		return calls
	}
	out := make([]workflow.ActionModelCall, len(calls))
	for i, c := range calls {
		prompt := make([]workflow.PromptMessage, len(c.Prompt))
		for j, m := range c.Prompt {
			prompt[j] = workflow.PromptMessage{Role: m.Role, Content: r.redactor.String(m.Content)}
		}
		c.Prompt, c.Response, c.Error = prompt, r.redactor.String(c.Response), r.redactor.String(c.Error)
		out[i] = c
	}
	return out
}

// scrubError returns err unchanged when its text carries no secret, else an
// error of the same kind whose message is scrubbed and whose cause is gone.
func (r *Registry) scrubError(err error) error {
	if !r.redactor.Contains(err.Error()) {
		return err
	}
	var we *workflow.Error
	msg := "action failed"
	if errors.As(err, &we) {
		msg = we.Message
	}
	return workflow.Errorf(workflow.KindOf(err), "%s", r.scrubString(msg))
}
