package engine

import "github.com/twostep/twostep/workflow"

// PlannedOutput returns the output mode the engine's model plans for call
// (see the package function PlannedOutput).
func (r *roundRun) PlannedOutput(call workflow.ModelCall) workflow.OutputMode {
	return workflow.PlannedOutput(r.e.model, call.Request())
}
