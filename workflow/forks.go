package workflow

import (
	"encoding/json"
)

// ForkOrigin names where a forked workflow came from: the original
// workflow and the step of it the fork starts at.
type ForkOrigin struct {
	WorkflowID string `json:"workflowId"`
	Round      int    `json:"round"`
	Step       int    `json:"step"`
}

// StepEditChecker is implemented by a Mode that judges a person's edited
// Stage 1 selection and Stage 2 parameters by the very rules it applies
// to its model's replies (React: prompts.ParseStage1 and ParseStage2),
// which workflow cannot import (DESIGN §2). Only such a mode's workflows
// can be forked.
type StepEditChecker interface {
	// CheckSelection judges reply, a Stage 1 reply's JSON object, as that
	// stage judges its model's reply, document references resolved in
	// msgs and the connection among conns. It returns the selection as
	// the mode accepts it, and one line per problem (none: accepted).
	CheckSelection(reply json.RawMessage, reg Registry, msgs []Message, conns []Connection) (Selection, []string)
	// CheckParameters judges params as Stage 2's reply for sel and
	// returns one line per problem (none: accepted).
	CheckParameters(params map[string]any, sel Selection, reg Registry) []string
	// Selected is the checkpoint (phase, selection, parameters) an
	// accepted selection leads to, as after the mode's live Stage 1 call.
	Selected(reg Registry, sel Selection) Checkpoint
}
