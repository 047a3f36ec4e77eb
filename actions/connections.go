package actions

import (
	"cmp"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/twostep/twostep/workflow"
)

// redacted replaces a secret wherever one would otherwise leave the package.
const redacted = "[REDACTED]"

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

// headerSecrets returns resolved (the values substituted for ${NAME}) plus
// the whole value of every header that carries credentials.
func headerSecrets(headers map[string]string, resolved []string) []string {
	out := slices.Clone(resolved)
	for name, v := range headers {
		if isCredentialHeader(name) {
			out = append(out, v)
			// "Bearer xyz": the token alone is a secret too.
			if _, token, ok := strings.Cut(v, " "); ok {
				out = append(out, strings.TrimSpace(token))
			}
		}
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

// normalizeSecrets drops empty values and duplicates and sorts the rest
// longest first, so that a replacer scrubs a whole value before its parts.
func normalizeSecrets(secrets []string) []string {
	var out []string
	for _, s := range secrets {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		if c := cmp.Compare(len(b), len(a)); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return slices.Compact(out)
}

// newScrubber returns a replacer of every secret by redacted, or nil when
// there is none.
func newScrubber(secrets []string) *strings.Replacer {
	if len(secrets) == 0 {
		return nil
	}
	pairs := make([]string, 0, 2*len(secrets))
	for _, s := range secrets {
		pairs = append(pairs, s, redacted)
	}
	return strings.NewReplacer(pairs...)
}

// scrubString replaces every secret in s.
func (r *Registry) scrubString(s string) string {
	if r.scrub == nil {
		return s
	}
	return r.scrub.Replace(s)
}

// scrubResult replaces every secret in the result's text, documents and
// model calls (a remote service may echo the credentials it received).
func (r *Registry) scrubResult(res workflow.ActionResult) workflow.ActionResult {
	if r.scrub == nil {
		return res
	}
	res.Text = r.scrub.Replace(res.Text)
	res.ModelCalls = r.scrubModelCalls(res.ModelCalls)
	for i := range res.Documents {
		d := &res.Documents[i]
		d.Name = r.scrub.Replace(d.Name)
		if r.containsSecret(string(d.Content)) {
			d.Content = []byte(r.scrub.Replace(string(d.Content)))
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
			prompt[j] = workflow.PromptMessage{Role: m.Role, Content: r.scrub.Replace(m.Content)}
		}
		c.Prompt, c.Response, c.Error = prompt, r.scrub.Replace(c.Response), r.scrub.Replace(c.Error)
		out[i] = c
	}
	return out
}

// scrubError returns err unchanged when its text carries no secret, else an
// error of the same kind whose message is scrubbed and whose cause is gone.
func (r *Registry) scrubError(err error) error {
	if !r.containsSecret(err.Error()) {
		return err
	}
	var we *workflow.Error
	msg := "action failed"
	if errors.As(err, &we) {
		msg = we.Message
	}
	return workflow.Errorf(workflow.KindOf(err), "%s", r.scrubString(msg))
}

// containsSecret reports whether s contains any secret.
func (r *Registry) containsSecret(s string) bool {
	for _, sec := range r.secrets {
		if strings.Contains(s, sec) {
			return true
		}
	}
	return false
}
