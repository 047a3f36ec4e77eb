package engine_test

import (
	"context"

	"github.com/twostep/twostep/workflow"
)

// holdEvery is an approval policy that holds every call but
// workflow.complete for a call approval, as a write, and has no intent
// rule.
type holdEvery struct{}

func (holdEvery) NeedsApproval(action string, _ map[string]any) (bool, workflow.Effect) {
	return action != workflow.CompleteAction, workflow.EffectWrite
}
func (holdEvery) NeedsIntentApproval(string) bool                    { return false }
func (holdEvery) ConstraintFragmentProblems(map[string]any) []string { return nil }
func (holdEvery) ConstraintProblems(_, _ map[string]any) []string    { return nil }

// pauseFor asks the approval gate about g's call, which holdEvery holds:
// the round pauses (an error when it does not).
func pauseFor(ctx context.Context, run workflow.Run, g workflow.Gate) error {
	g.Moment = workflow.MomentCall
	v, err := run.Gate(ctx, g)
	if err == nil && !v.Paused {
		err = workflow.Errorf(workflow.KindInternal, "the gate did not pause %s", g.Action)
	}
	return err
}
