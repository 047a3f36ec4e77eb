package workflow_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/twostep/twostep/workflow"
)

// Clone copies every container a mode may change, the retry state
// included, so a run's checkpoint never aliases the one it came from.
func TestCheckpointCloneIsDeep(t *testing.T) {
	t.Parallel()
	orig := &workflow.Checkpoint{
		Phase: workflow.PhaseParameterize, Attempt: 1, Feedback: []string{"/text: required"},
		Selection:  &workflow.Selection{Action: "a.b", Learnings: []string{"l"}, RequiredInputDocuments: []string{"docList:x"}},
		Parameters: map[string]any{"text": "x"},
		Mode:       workflow.ModeState(`{"plan":[{"action":"a.b","parameters":{"q":1}}]}`),
	}
	want := &workflow.Checkpoint{
		Phase: workflow.PhaseParameterize, Attempt: 1, Feedback: []string{"/text: required"},
		Selection:  &workflow.Selection{Action: "a.b", Learnings: []string{"l"}, RequiredInputDocuments: []string{"docList:x"}},
		Parameters: map[string]any{"text": "x"},
		Mode:       workflow.ModeState(`{"plan":[{"action":"a.b","parameters":{"q":1}}]}`),
	}
	c := orig.Clone()
	if diff := cmp.Diff(want, c); diff != "" {
		t.Fatalf("clone differs (-want +got):\n%s", diff)
	}
	c.Feedback[0] = "changed"
	c.Selection.Learnings[0] = "changed"
	c.Selection.RequiredInputDocuments[0] = "changed"
	c.Parameters["text"] = "changed"
	if diff := cmp.Diff(want, orig); diff != "" {
		t.Errorf("changing the clone changed the original (-want +got):\n%s", diff)
	}
	if (*workflow.Checkpoint)(nil).Clone() != nil {
		t.Error("nil.Clone() != nil")
	}
}
