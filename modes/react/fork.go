package react

import (
	"encoding/json"

	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/workflow"
)

var _ workflow.StepEditChecker = (*Mode)(nil)

// CheckSelection judges reply, an edited Stage 1 selection written as a
// Stage 1 reply, with prompts.ParseStage1: the very rules a live Stage 1
// reply meets, references resolved in msgs (a fork's messages).
func (m *Mode) CheckSelection(reply json.RawMessage, reg workflow.Registry, msgs []workflow.Message, conns []workflow.Connection) (workflow.Selection, []string) {
	res := prompts.ParseStage1(string(reply), prompts.Stage1Env{Registry: reg, Messages: msgs, Connections: conns})
	return res.Selection, res.Problems
}

// CheckParameters judges edited parameters with prompts.ParseStage2, as
// the Stage 2 reply {"schema": "parameters_v1", "parameters": params} for
// sel would be judged.
func (m *Mode) CheckParameters(params map[string]any, sel workflow.Selection, reg workflow.Registry) []string {
	spec, ok := reg.Action(sel.Action)
	if !ok {
		return []string{"action " + sel.Action + " is not registered"}
	}
	reply, err := json.Marshal(map[string]any{"schema": prompts.ParametersSchemaID, "parameters": params})
	if err != nil {
		return []string{"the parameters cannot be encoded as JSON: " + err.Error()}
	}
	return m.prompts.ParseStage2(string(reply), spec, sel.ParametersSchema.Fields, reg).Problems
}

// Selected is the checkpoint an accepted selection leads to, a live
// Stage 1 reply's as a fork's: execution with no parameters when the
// step has nothing to fill (DESIGN §10.1: no Stage 2 call), else Stage 2.
func (m *Mode) Selected(reg workflow.Registry, sel workflow.Selection) workflow.Checkpoint {
	if m.nothingToFill(reg, sel) {
		return workflow.Checkpoint{Phase: workflow.PhaseExecute, Selection: &sel, Parameters: map[string]any{}}
	}
	return workflow.Checkpoint{Phase: workflow.PhaseParameterize, Selection: &sel}
}
