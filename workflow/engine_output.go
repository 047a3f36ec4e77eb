package workflow

// PlannedOutput returns the output mode the engine's model plans for call
// (see the package function PlannedOutput).
func (r *roundRun) PlannedOutput(call ModelCall) OutputMode {
	return PlannedOutput(r.e.model, call.Request())
}
