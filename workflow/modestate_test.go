package workflow_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/twostep/twostep/workflow"
)

// oldLayout is a checkpoint as versions whose Checkpoint had the modes'
// fields (plan, planIndex, replans, compactionSkipped) wrote it: the mode
// members between "previous" and "approval", and an AfterReject holding
// React's member; strings escaped as encoding/json escapes them.
const oldLayout = `{"step":3,"phase":"execute","failures":1,"attempt":2,"feedback":["f"],"maxTokens":9,"previous":"p",` +
	`"plan":[{"action":"a.b","parameters":{"q":"\u003cx\u003e"},"resultLabel":"r","documents":["docList:l"],"connection":"mail"}],` +
	`"planIndex":1,"replans":2,"approval":{"id":"g","parameters":{"k":1}},` +
	`"afterReject":{"step":4,"phase":"select","failures":0,"compactionSkipped":true}}`

// A checkpoint stored before the modes' state left Checkpoint decodes
// with those members as the mode's state, in their order, and encodes
// to a form that decodes to the same value.
func TestCheckpointDecodesTheOldLayout(t *testing.T) {
	t.Parallel()
	var cp workflow.Checkpoint
	if err := json.Unmarshal([]byte(oldLayout), &cp); err != nil {
		t.Fatal(err)
	}
	want := workflow.Checkpoint{
		Step: 3, Phase: workflow.PhaseExecute, Failures: 1, Attempt: 2, Feedback: []string{"f"}, MaxTokens: 9, Previous: "p",
		Mode: workflow.ModeState(`{"plan":[{"action":"a.b","parameters":{"q":"\u003cx\u003e"},"resultLabel":"r","documents":["docList:l"],"connection":"mail"}],` +
			`"planIndex":1,"replans":2}`),
		Approval: &workflow.ApprovalGrant{ID: "g", Parameters: map[string]any{"k": float64(1)}},
		AfterReject: &workflow.Checkpoint{Step: 4, Phase: workflow.PhaseSelect,
			Mode: workflow.ModeState(`{"compactionSkipped":true}`)},
	}
	if diff := cmp.Diff(want, cp); diff != "" {
		t.Fatalf("decoded (-want +got):\n%s", diff)
	}
	var plan struct {
		Plan      []workflow.PlanStep `json:"plan"`
		PlanIndex int                 `json:"planIndex"`
		Replans   int                 `json:"replans"`
	}
	if err := cp.Mode.Decode(&plan); err != nil || len(plan.Plan) != 1 || plan.Plan[0].Parameters["q"] != "<x>" || plan.PlanIndex != 1 || plan.Replans != 2 {
		t.Errorf("mode state = %+v, %v; want the plan at index 1 after 2 re-plans", plan, err)
	}
	got, err := json.Marshal(cp)
	if err != nil {
		t.Fatal(err)
	}
	var back workflow.Checkpoint
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, back); diff != "" {
		t.Errorf("encoded %s, which decodes (-want +got):\n%s", got, diff)
	}
}

// Without a mode state, or with one and no approval or afterReject after
// it, a checkpoint encodes as its common members followed by the mode's.
func TestCheckpointEncodesTheModeStateInPlace(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		cp   workflow.Checkpoint
		want string
	}{
		"no mode state": {workflow.Checkpoint{Step: 1, Phase: workflow.PhaseSelect}, `{"step":1,"phase":"select","failures":0}`},
		"mode state last": {workflow.Checkpoint{Step: 1, Phase: workflow.PhaseSelect, Mode: workflow.ModeState(`{"compactionSkipped":true}`)},
			`{"step":1,"phase":"select","failures":0,"compactionSkipped":true}`},
		"empty object": {workflow.Checkpoint{Step: 1, Phase: workflow.PhaseSelect, Mode: workflow.ModeState(`{}`)}, `{"step":1,"phase":"select","failures":0}`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := json.Marshal(&tc.cp)
			if err != nil || string(got) != tc.want {
				t.Errorf("Marshal = %s, %v; want %s", got, err, tc.want)
			}
			var back workflow.Checkpoint
			if err := json.Unmarshal(got, &back); err != nil {
				t.Fatal(err)
			}
			if len(tc.cp.Mode) <= 2 {
				tc.cp.Mode = nil
			}
			if diff := cmp.Diff(tc.cp, back); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

// NewModeState refuses what is not a JSON object and makes nil of an
// empty one, so a zero state stores nothing.
func TestNewModeState(t *testing.T) {
	t.Parallel()
	if _, err := workflow.NewModeState([]int{1}); err == nil {
		t.Error("NewModeState(a slice) gave no error")
	}
	type st struct {
		N int `json:"n,omitempty"`
	}
	if s, err := workflow.NewModeState(st{}); err != nil || s != nil {
		t.Errorf("NewModeState(zero) = %q, %v; want nil", s, err)
	}
	s, err := workflow.NewModeState(st{N: 2})
	var back st
	if err != nil || s.Decode(&back) != nil || back.N != 2 {
		t.Errorf("NewModeState(n=2) = %q, %v, decoded %+v", s, err, back)
	}
}
