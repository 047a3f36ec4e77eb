package actions

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/twostep/twostep/workflow"
)

// ExternalAction is an action served outside this package (an MCP server's
// tool): the registry compiles its schema, validates every call against it
// and runs Run through the same Execute as its own actions (parameters
// checked again, panics recovered, result and error scrubbed of secrets).
type ExternalAction struct {
	// Spec is the action's public description; its Parameters are replaced
	// by the compiled Schema's JSON text.
	Spec workflow.ActionSpec
	// Schema is the JSON Schema of the parameters (decoded JSON).
	Schema map[string]any
	// User, when set, is the only user who sees and may run the action.
	User string
	// Run executes one validated call.
	Run func(ctx context.Context, call workflow.ActionCall) (workflow.ActionResult, error)
}

// external is the registry's snapshot of every external action, by source.
// A snapshot is never changed once published: SetExternal builds a new one.
type external struct {
	bySource map[string][]action
	byName   map[string]action
	specs    []workflow.ActionSpec // sorted by name
}

// SetExternal replaces every action of source (an MCP server's name) with
// list, atomically: a concurrent Actions, Action or Execute sees either the
// old set or the new one. An action whose schema does not compile, whose
// name is taken by a built-in or configured action, or whose name is not
// "method.action" is skipped; skipped maps its name to the reason. An empty
// list removes the source's actions. Safe for concurrent use.
func (r *Registry) SetExternal(source string, list []ExternalAction) (skipped map[string]error) {
	var built []action
	for _, ea := range list {
		a, err := r.externalAction(ea)
		if err != nil {
			if skipped == nil {
				skipped = map[string]error{}
			}
			skipped[ea.Spec.Name] = err
			continue
		}
		built = append(built, a)
	}
	return r.mount(source, built, skipped)
}

// mount publishes built as every action of source in a new snapshot,
// adding to skipped the actions whose name another source already serves.
func (r *Registry) mount(source string, built []action, skipped map[string]error) map[string]error {
	r.extMu.Lock()
	defer r.extMu.Unlock()
	old := r.ext.Load()
	next := &external{bySource: map[string][]action{}, byName: map[string]action{}}
	if old != nil {
		maps.Copy(next.bySource, old.bySource)
	}
	if len(built) == 0 {
		delete(next.bySource, source)
	} else {
		next.bySource[source] = built
	}
	for _, src := range slices.Sorted(maps.Keys(next.bySource)) {
		for _, a := range next.bySource[src] {
			if _, dup := next.byName[a.spec.Name]; dup {
				if skipped == nil {
					skipped = map[string]error{}
				}
				skipped[a.spec.Name] = fmt.Errorf("another source already serves %s", a.spec.Name)
				continue
			}
			next.byName[a.spec.Name] = a
			next.specs = append(next.specs, a.spec)
		}
	}
	slices.SortFunc(next.specs, func(a, b workflow.ActionSpec) int { return cmp.Compare(a.Name, b.Name) })
	r.ext.Store(next)
	return skipped
}

// externalAction checks and compiles one external action.
func (r *Registry) externalAction(ea ExternalAction) (action, error) {
	name := ea.Spec.Name
	if m, a, ok := strings.Cut(name, "."); !ok || m == "" || a == "" {
		return action{}, fmt.Errorf("name %q is not method.action", name)
	}
	if _, taken := r.actions[name]; taken {
		return action{}, fmt.Errorf("name %q is taken by a configured action", name)
	}
	if ea.Run == nil {
		return action{}, fmt.Errorf("%s has nothing to run", name)
	}
	schema, err := compileSchema(name, ea.Schema)
	if err != nil {
		return action{}, fmt.Errorf("the input schema of %s does not compile: %w", name, err)
	}
	spec := ea.Spec
	spec.Parameters = schema.raw
	if spec.Effect != workflow.EffectRead {
		spec.Effect = workflow.EffectWrite
	}
	if spec.Documents == "" {
		spec.Documents = workflow.DocumentsNone
	}
	run := ea.Run
	return action{
		spec:   spec,
		schema: schema,
		user:   ea.User,
		run: func(ctx context.Context, inv invocation) (workflow.ActionResult, error) {
			return run(ctx, inv.call)
		},
	}, nil
}

// lookup returns the action called name that userID may see: a built-in or
// configured action, or an external one (restricted ones only to their
// user; userID "" sees every action).
func (r *Registry) lookup(name, userID string) (action, bool) {
	if a, ok := r.actions[name]; ok {
		return a, true
	}
	ext := r.ext.Load()
	if ext == nil {
		return action{}, false
	}
	a, ok := ext.byName[name]
	if !ok || (userID != "" && a.user != "" && a.user != userID) {
		return action{}, false
	}
	return a, true
}

// specsFor returns every action userID may see ("" for all), sorted.
func (r *Registry) specsFor(userID string) []workflow.ActionSpec {
	ext := r.ext.Load()
	if ext == nil || len(ext.specs) == 0 {
		return slices.Clone(r.specs)
	}
	out := slices.Clone(r.specs)
	for _, s := range ext.specs {
		if a := ext.byName[s.Name]; userID == "" || a.user == "" || a.user == userID {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b workflow.ActionSpec) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// ForUser returns the registry as userID sees it: actions restricted to
// another user (a per-user MCP server's tools) are absent from Actions and
// Action, and refused by Execute.
func (r *Registry) ForUser(userID string) workflow.Registry {
	return userView{r: r, user: userID}
}

// userView is a Registry seen by one user.
type userView struct {
	r    *Registry
	user string
}

func (v userView) Actions() []workflow.ActionSpec { return cloneSpecs(v.r.specsFor(v.user)) }

func (v userView) Action(name string) (workflow.ActionSpec, bool) {
	a, ok := v.r.lookup(name, v.user)
	a.spec.Parameters = slices.Clone(a.spec.Parameters)
	return a.spec, ok
}

func (v userView) ValidateParameters(name string, params map[string]any) []string {
	if _, ok := v.r.lookup(name, v.user); !ok {
		return []string{"/: unknown action " + quote(name)}
	}
	return v.r.ValidateParameters(name, params)
}

func (v userView) Execute(ctx context.Context, call workflow.ActionCall) (workflow.ActionResult, error) {
	return v.r.Execute(ctx, call)
}

func (v userView) Connections(userID string) []workflow.Connection {
	return v.r.Connections(userID)
}

// EffectOf is Registry.EffectOf for an action as v's user sees it: one
// restricted to another user is unknown, so a write.
func (v userView) EffectOf(name string, params map[string]any) workflow.Effect {
	return v.r.effectFor(name, v.user, params)
}

// cloneSpecs deep-copies specs' parameters so callers may change them.
func cloneSpecs(specs []workflow.ActionSpec) []workflow.ActionSpec {
	for i := range specs {
		specs[i].Parameters = slices.Clone(specs[i].Parameters)
	}
	return specs
}
