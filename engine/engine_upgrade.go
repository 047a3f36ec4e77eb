package engine

import "github.com/twostep/twostep/workflow"

// upgradeCheckpoint gives the checkpoint of wf, when it was stored before
// checkpoints named their step (Step 0), the step that version derived:
// the workflow's Step, or the step after it when the failure breaker had
// ended the round after committing that step; and to a pending approval's
// AfterReject, the step after the checkpoint's. A checkpoint with its step
// is left as it is.
func upgradeCheckpoint(wf *workflow.Workflow) {
	cp := wf.Checkpoint
	if cp == nil || cp.Step != 0 {
		return
	}
	cp.Step = wf.Step
	if wf.Status == workflow.StatusFailed && wf.StopReason == workflow.StopFailures && cp.Failures >= MaxFailuresInARow {
		cp.Step++
	}
	if cp.AfterReject != nil && cp.AfterReject.Step == 0 {
		cp.AfterReject.Step = cp.Step + 1
	}
}
