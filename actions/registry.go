package actions

import (
	"cmp"
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/rs/zerolog"

	"github.com/twostep/twostep/outbound"
	"github.com/twostep/twostep/redact"
	"github.com/twostep/twostep/workflow"
)

var _ workflow.Registry = (*Registry)(nil)

// Registry holds every action twostep may run and every user's connections.
// Its built-in and configured actions are fixed by New; external actions
// (MCP tools) come and go through SetExternal, published as immutable
// snapshots. It is safe for concurrent use.
type Registry struct {
	actions  map[string]action
	ext      atomic.Pointer[external]
	extMu    sync.Mutex // serialises SetExternal
	specs    []workflow.ActionSpec
	conns    map[string]map[string]*connection // user → label → connection
	secrets  []string
	extra    []string // WithSecrets
	redactor *redact.Redactor
	client   *http.Client
	model    workflow.Model
	limits   Limits
	log      zerolog.Logger
}

// action is one registered action: its public spec, its compiled schema,
// the checks a schema cannot express and the function that runs it.
type action struct {
	spec   workflow.ActionSpec
	schema paramSchema
	// check, when set, runs on schema-valid parameters and returns
	// "path: message" lines like the schema's.
	check func(params map[string]any) []string
	run   func(ctx context.Context, inv invocation) (workflow.ActionResult, error)
	// user, when set, is the only user who may see and run the action.
	user string
}

// problems returns every "path: message" line for normalized params, sorted:
// the schema's, then (when those pass) the action's own checks.
func (a action) problems(params map[string]any) []string {
	lines := a.schema.validateNormal(params)
	if len(lines) == 0 && a.check != nil {
		lines = a.check(params)
		slices.Sort(lines)
	}
	return lines
}

// invocation is what an action's run function receives: the validated call
// and the resolved connection (nil when the call has none).
type invocation struct {
	call workflow.ActionCall
	conn *connection
}

// Option configures New.
type Option func(*Registry)

// WithHTTPClient sets the client used for http.request and HTTP actions. The
// client is never modified: each request uses a shallow copy whose redirect
// policy keeps it under the allowed URL.
func WithHTTPClient(c *http.Client) Option {
	return func(r *Registry) {
		if c != nil {
			r.client = c
		}
	}
}

// WithSecrets adds secret values held outside the registry's own config
// (an MCP server's resolved env and header values): they are scrubbed from
// every result and error like connection secrets, and listed by Secrets.
func WithSecrets(secrets ...string) Option {
	return func(r *Registry) { r.extra = append(r.extra, secrets...) }
}

// WithLogger sets the logger for one line per execution. Log lines never
// carry a secret, parameters or document content.
func WithLogger(l zerolog.Logger) Option {
	return func(r *Registry) { r.log = l }
}

// New builds a Registry from cfg. model runs ai.process; when model is nil,
// ai.process is not registered. New checks cfg like LoadConfig does and
// reports every problem at once.
func New(cfg Config, model workflow.Model, opts ...Option) (*Registry, error) {
	if problems := cfg.problems(); len(problems) > 0 {
		return nil, invalidConfig(problems)
	}
	r := &Registry{
		actions: map[string]action{},
		client:  &http.Client{},
		model:   model,
		limits:  cfg.Limits.withDefaults(),
		log:     zerolog.Nop(),
	}
	for _, o := range opts {
		o(r)
	}
	for _, a := range r.builtins() {
		r.actions[a.spec.Name] = a
	}
	for _, ac := range cfg.HTTPActions {
		a, err := r.httpAction(ac)
		if err != nil {
			return nil, err
		}
		r.actions[a.spec.Name] = a
	}
	for _, a := range r.actions {
		r.specs = append(r.specs, a.spec)
	}
	slices.SortFunc(r.specs, func(a, b workflow.ActionSpec) int { return cmp.Compare(a.Name, b.Name) })
	r.conns, r.secrets = buildConnections(cfg)
	for _, ac := range cfg.HTTPActions {
		r.secrets = append(r.secrets, headerSecrets(ac.Headers, ac.secrets)...)
	}
	r.secrets = normalizeSecrets(append(r.secrets, r.extra...))
	r.redactor = redact.New(r.secrets...)
	return r, nil
}

// Actions returns every registered action (external ones of every user
// included; see ForUser), sorted by name. The result is a copy the caller
// may change.
func (r *Registry) Actions() []workflow.ActionSpec {
	return cloneSpecs(r.specsFor(""))
}

// Action returns one action by name.
func (r *Registry) Action(name string) (workflow.ActionSpec, bool) {
	a, ok := r.lookup(name, "")
	a.spec.Parameters = slices.Clone(a.spec.Parameters)
	return a.spec, ok
}

// ValidateParameters checks params against the action's JSON Schema, then
// (when they pass) against the action's own rules (an http.request path
// that would leave the base URL, a document.generate file name that is not
// usable...), and returns one "path: message" line per problem (paths are
// JSON Pointers, "/" the parameters object); nil when params are valid.
func (r *Registry) ValidateParameters(name string, params map[string]any) []string {
	a, ok := r.lookup(name, "")
	if !ok {
		return []string{"/: unknown action " + quote(name)}
	}
	norm, err := workflow.NormalizeParams(params)
	if err != nil {
		return []string{"/: parameters cannot be written as JSON: " + err.Error()}
	}
	return a.problems(norm)
}

// Connections returns the connections userID owns, sorted by label. They
// carry label, kind and description only, never a secret.
func (r *Registry) Connections(userID string) []workflow.Connection {
	var out []workflow.Connection
	for _, c := range r.conns[userID] {
		out = append(out, c.public)
	}
	slices.SortFunc(out, func(a, b workflow.Connection) int { return cmp.Compare(a.Label, b.Label) })
	return out
}

// Secrets returns every secret value the registry holds (resolved ${NAME}
// references, whole values of credential headers), longest first, so that
// trace and log redaction can scrub them.
func (r *Registry) Secrets() []string {
	return slices.Clone(r.secrets)
}

// EffectOf returns the effect of one call of the action: http.request with
// method GET or HEAD reads, every other method writes; other actions have their
// registered effect. Unknown actions are treated as writes.
func (r *Registry) EffectOf(name string, params map[string]any) workflow.Effect {
	return r.effectFor(name, "", params)
}

// effectFor is EffectOf for an action as userID sees it.
func (r *Registry) effectFor(name, userID string, params map[string]any) workflow.Effect {
	a, ok := r.lookup(name, userID)
	if !ok {
		return workflow.EffectWrite
	}
	if name == HTTPRequestAction {
		if m, _ := params["method"].(string); m == "" || strings.EqualFold(m, http.MethodGet) || strings.EqualFold(m, http.MethodHead) {
			return workflow.EffectRead
		}
		return workflow.EffectWrite
	}
	return a.spec.Effect
}

// quote quotes s for a message.
func quote(s string) string {
	return "\"" + strings.ReplaceAll(s, "\"", "'") + "\""
}

// out is the outbound client of http.request and HTTP actions: the
// registry's HTTP client under its limits.
func (r *Registry) out() outbound.Client {
	return outbound.Client{HTTP: r.client, Timeout: r.limits.HTTPTimeout, MaxResponseBytes: r.limits.MaxResponseBytes}
}
