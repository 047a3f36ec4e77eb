// Package approval is the approval policy (DESIGN §9.1, §10.4): from the
// YAML approvals section it decides which calls wait for a person's
// decision — by rule per action, else by the call's effect — and which
// steps pause for an intent approval, and it judges the constraints a
// person attaches to an intent approval. It reads the action registry
// through the small Registry interface; the engine consumes it as
// workflow.ApprovalPolicy.
package approval

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/twostep/twostep/workflow"
)

// Approval rules (DESIGN §9.1): which calls wait for a person's decision.
const (
	// Write pauses calls whose effect is write (the default).
	Write = "write"
	// Never lets calls run without a decision.
	Never = "never"
	// Always pauses every call of the action, reads too.
	Always = "always"
	// Intent pauses every step of the action after Stage 1, before
	// Stage 2: a person approves the intent and may narrow the parameters
	// with constraints (DESIGN §10.4).
	Intent = "intent"
)

// Config is the YAML approvals section: the default rule (write
// or never) and per-action rules (always, never, write or intent).
type Config struct {
	Default string            `yaml:"default"`
	Actions map[string]string `yaml:"actions"`
}

// Registry is what the policy reads of the action registry
// (*actions.Registry): the registered actions and each call's effect.
type Registry interface {
	// Action returns the spec of a registered action.
	Action(name string) (workflow.ActionSpec, bool)
	// Actions lists the registered actions.
	Actions() []workflow.ActionSpec
	// EffectOf returns the effect of one call of the action (unknown
	// actions write).
	EffectOf(name string, params map[string]any) workflow.Effect
}

// Policy is the approval policy of a registry: it implements
// workflow.ApprovalPolicy with each call's effect (for the built-in
// registry: http.request reads on GET and HEAD, writes otherwise; other
// actions by declaration). A zero Policy judges constraints only.
type Policy struct {
	reg   Registry
	def   string
	rules map[string]string
}

var _ workflow.ApprovalPolicy = (*Policy)(nil)

// New checks cfg against the registry — a rule must be one of the
// known ones and name a registered action, or an MCP tool
// mcp.<server>.<tool> of one of mcpServers (the configured server names:
// its tools are listed only once the server answers, after start-up), or
// <source>.<operation> of one of the openapiActions sources whose document
// is not loaded yet (its URL could not be fetched at start; once loaded,
// the operation must exist) — and returns the policy, reporting every
// problem at once.
func New(cfg Config, reg Registry, mcpServers, openapiSources []string) (*Policy, error) {
	loaded := map[string]bool{}
	for _, s := range reg.Actions() {
		loaded[s.Server] = true
	}
	var problems []string
	def := cfg.Default
	switch def {
	case "":
		def = Write
	case Write, Never:
	default:
		problems = append(problems, fmt.Sprintf("approvals.default %q must be %s or %s", cfg.Default, Write, Never))
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Actions)) {
		if _, ok := reg.Action(name); !ok {
			source, _, _ := strings.Cut(name, ".")
			pending := slices.Contains(openapiSources, source) && !loaded[source]
			if p := mcpToolProblem(name, mcpServers); p != "" {
				problems = append(problems, p)
			} else if !pending && !strings.HasPrefix(name, "mcp.") {
				problems = append(problems, fmt.Sprintf("approvals.actions: %q is not a registered action", name))
			}
		}
		if r := cfg.Actions[name]; !slices.Contains([]string{Always, Never, Write, Intent}, r) {
			problems = append(problems, fmt.Sprintf("approvals.actions.%s: %q must be always, never, write or intent", name, r))
		}
	}
	if len(problems) > 0 {
		return nil, workflow.Errorf(workflow.KindInvalid, "invalid approvals configuration: %s", strings.Join(problems, "; "))
	}
	return &Policy{reg: reg, def: def, rules: cfg.Actions}, nil
}

// mcpToolProblem says what is wrong with a rule's name that starts with
// "mcp." and is not registered yet: it must be mcp.<server>.<tool> with
// <server> configured. It returns "" for a name that is not an MCP name or
// is a well-formed one of a configured server.
func mcpToolProblem(name string, servers []string) string {
	rest, ok := strings.CutPrefix(name, "mcp.")
	if !ok {
		return ""
	}
	server, tool, ok := strings.Cut(rest, ".")
	if !ok || server == "" || tool == "" {
		return fmt.Sprintf("approvals.actions: %q is not an MCP tool name (mcp.<server>.<tool>)", name)
	}
	if !slices.Contains(servers, server) {
		return fmt.Sprintf("approvals.actions: %q names MCP server %q, which is not in mcpServers", name, server)
	}
	return ""
}

// NeedsIntentApproval reports whether the action's rule is intent: its
// steps pause after Stage 1 (workflow.complete never does).
func (a *Policy) NeedsIntentApproval(action string) bool {
	return action != workflow.CompleteAction && a.rules[action] == Intent
}

// NeedsApproval reports whether the call must wait for a decision, and its
// effect. workflow.complete never waits; an action under the rule intent
// always does (its step pauses after Stage 1, or, planned or outside a
// standing approval, before it runs).
func (a *Policy) NeedsApproval(action string, params map[string]any) (bool, workflow.Effect) {
	effect := a.reg.EffectOf(action, params)
	if action == workflow.CompleteAction {
		return false, effect
	}
	rule, ok := a.rules[action]
	if !ok {
		rule = a.def
	}
	switch rule {
	case Always, Intent:
		return true, effect
	case Never:
		return false, effect
	}
	return effect == workflow.EffectWrite, effect
}
