package react

import (
	"fmt"

	"github.com/twostep/twostep/prompts"
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

// rejects reports whether g rejects a reply for action's ungrounded
// values: an action whose effect is not read counts as a write.
func (g Grounded) rejects(action workflow.ActionSpec) bool {
	return g == GroundedAll || g == GroundedWrite && action.Effect != workflow.EffectRead
}

// Option configures a Mode (New).
type Option func(*Mode)

// RequireGrounded sets which Stage 2 replies an ungrounded value rejects
// (default GroundedNever).
func RequireGrounded(g Grounded) Option {
	return func(m *Mode) { m.grounded = g }
}

// stage2Grounding is what a Stage 2 call for sel shows the model, the
// only source of its values.
func stage2Grounding(sel workflow.Selection, spec workflow.ActionSpec) prompts.Grounding {
	return prompts.Grounding{Objective: sel.ActionObjective, Context: sel.ParametersContext, Action: sel.Action, Schema: spec.Parameters}
}
