package actions

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/twostep/twostep/workflow"
)

// Approval rules (DESIGN §9.1): which calls wait for a person's decision.
const (
	// ApproveWrite pauses calls whose effect is write (the default).
	ApproveWrite = "write"
	// ApproveNever lets calls run without a decision.
	ApproveNever = "never"
	// ApproveAlways pauses every call of the action, reads too.
	ApproveAlways = "always"
	// ApproveIntent pauses every step of the action after Stage 1, before
	// Stage 2: a person approves the intent and may narrow the parameters
	// with constraints (DESIGN §10.4).
	ApproveIntent = "intent"
)

// ApprovalsConfig is the YAML approvals section: the default rule (write
// or never) and per-action rules (always, never, write or intent).
type ApprovalsConfig struct {
	Default string            `yaml:"default"`
	Actions map[string]string `yaml:"actions"`
}

// Approvals is the approval policy of a registry: it implements
// workflow.ApprovalPolicy with each call's effect (EffectOf: http.request
// reads on GET and HEAD, writes otherwise; other actions by declaration).
type Approvals struct {
	reg   *Registry
	def   string
	rules map[string]string
}

var (
	_ workflow.ApprovalPolicy = (*Approvals)(nil)
	_ workflow.IntentPolicy   = (*Approvals)(nil)
)

// NewApprovals checks cfg against the registry — a rule must be one of the
// known ones and name a registered action, or an MCP tool
// mcp.<server>.<tool> of one of mcpServers (the configured server names:
// its tools are listed only once the server answers, after start-up) —
// and returns the policy, reporting every problem at once.
func NewApprovals(cfg ApprovalsConfig, reg *Registry, mcpServers ...string) (*Approvals, error) {
	return NewApprovalsFor(cfg, reg, mcpServers, nil)
}

// NewApprovalsFor is NewApprovals that also knows the openapiActions
// sources: a rule naming <source>.<operation> of a source whose document
// is not loaded yet (its URL could not be fetched at start) is accepted;
// once the document is loaded, the operation must exist.
func NewApprovalsFor(cfg ApprovalsConfig, reg *Registry, mcpServers, openapiSources []string) (*Approvals, error) {
	loaded := map[string]bool{}
	for _, s := range reg.Actions() {
		loaded[s.Server] = true
	}
	var problems []string
	def := cfg.Default
	switch def {
	case "":
		def = ApproveWrite
	case ApproveWrite, ApproveNever:
	default:
		problems = append(problems, fmt.Sprintf("approvals.default %q must be %s or %s", cfg.Default, ApproveWrite, ApproveNever))
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
		if r := cfg.Actions[name]; !slices.Contains([]string{ApproveAlways, ApproveNever, ApproveWrite, ApproveIntent}, r) {
			problems = append(problems, fmt.Sprintf("approvals.actions.%s: %q must be always, never, write or intent", name, r))
		}
	}
	if len(problems) > 0 {
		return nil, workflow.Errorf(workflow.KindInvalid, "invalid approvals configuration: %s", strings.Join(problems, "; "))
	}
	return &Approvals{reg: reg, def: def, rules: cfg.Actions}, nil
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
func (a *Approvals) NeedsIntentApproval(action string) bool {
	return action != workflow.CompleteAction && a.rules[action] == ApproveIntent
}

// NeedsApproval reports whether the call must wait for a decision, and its
// effect. workflow.complete never waits; an action under the rule intent
// always does (its step pauses after Stage 1, or, planned or outside a
// standing approval, before it runs).
func (a *Approvals) NeedsApproval(action string, params map[string]any) (bool, workflow.Effect) {
	effect := a.reg.EffectOf(action, params)
	if action == workflow.CompleteAction {
		return false, effect
	}
	rule, ok := a.rules[action]
	if !ok {
		rule = a.def
	}
	switch rule {
	case ApproveAlways, ApproveIntent:
		return true, effect
	case ApproveNever:
		return false, effect
	}
	return effect == workflow.EffectWrite, effect
}
