package react

import (
	"fmt"

	"github.com/twostep/twostep/workflow"
)

// Grounded says which Stage 2 replies a value that appears nowhere in
// what Stage 2 was shown (prompts.Ungrounded) rejects, with feedback
// naming the fields and the usual retries (DESIGN §10.4). Every Stage 2
// trace lists such fields whatever the setting.
type Grounded string

// The settings of YAML stage2.requireGrounded.
const (
	// GroundedNever rejects no reply for an ungrounded value (the default).
	GroundedNever Grounded = "never"
	// GroundedWrite rejects one for an action that is not read-only.
	GroundedWrite Grounded = "write"
	// GroundedAll rejects one for every action, workflow.complete included.
	GroundedAll Grounded = "all"
)

// ParseGrounded returns the setting named s ("" is GroundedNever).
func ParseGrounded(s string) (Grounded, error) {
	switch g := Grounded(s); g {
	case "":
		return GroundedNever, nil
	case GroundedNever, GroundedWrite, GroundedAll:
		return g, nil
	}
	return "", fmt.Errorf("%q is not one of never, write, all", s)
}

// Rejects reports whether g rejects a reply with ungrounded values for a
// call of effect, as a round does: any effect but read counts as a write.
// A qualification run (package qualify) asks it to retry as a round would.
func (g Grounded) Rejects(effect workflow.Effect) bool { return g.rejects(effect) }

// rejects reports whether g rejects a reply with ungrounded values for a
// call of effect: any effect but read counts as a write.
func (g Grounded) rejects(effect workflow.Effect) bool {
	return g == GroundedAll || g == GroundedWrite && effect != workflow.EffectRead
}

// callEffects is a registry that knows one call's effect from its
// parameters, as the approval rules judge it (the actions registry:
// http.request reads on GET and HEAD, writes otherwise).
type callEffects interface {
	EffectOf(action string, params map[string]any) workflow.Effect
}

// effectOf is the effect of calling spec with params: the registry's
// judgement when it has one, else the action's declared effect.
func effectOf(reg workflow.Registry, spec workflow.ActionSpec, params map[string]any) workflow.Effect {
	if r, ok := reg.(callEffects); ok {
		return r.EffectOf(spec.Name, params)
	}
	return spec.Effect
}

// Option configures a Mode (New).
type Option func(*Mode)

// RequireGrounded sets which Stage 2 replies an ungrounded value rejects
// (default GroundedNever).
func RequireGrounded(g Grounded) Option {
	return func(m *Mode) { m.grounded = g }
}
