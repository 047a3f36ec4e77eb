package react_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/workflow"
)

// holdAll holds every call but workflow.complete for a decision.
type holdAll struct{}

func (holdAll) NeedsApproval(action string, _ map[string]any) (bool, workflow.Effect) {
	return action != workflow.CompleteAction, workflow.EffectWrite
}
func (holdAll) NeedsIntentApproval(string) bool                    { return false }
func (holdAll) ConstraintFragmentProblems(map[string]any) []string { return nil }
func (holdAll) ConstraintProblems(_, _ map[string]any) []string    { return nil }

// TestEditedParametersAreJudgedAsAStage2Reply feeds the same parameters
// to a Stage 2 reply (prompts.ParseStage2) and to an approval's edit
// (Engine.Decide) of a step whose Stage 1 asked for "body" and "extra":
// both give the same verdict and the same problem lines, in the same
// order — additionalProperties, forbidden names, required fields and
// wording included.
func TestEditedParametersAreJudgedAsAStage2Reply(t *testing.T) {
	t.Parallel()
	schema := func(additional bool) json.RawMessage {
		b, _ := json.Marshal(map[string]any{
			"type": "object", "required": []string{"title"}, "additionalProperties": additional,
			"properties": map[string]any{
				"title": map[string]any{"type": "string"}, "body": map[string]any{"type": "string"},
				"format": map[string]any{"type": "string"},
			},
		})
		return b
	}
	const closed, open = "test.closed", "test.open"
	tests := []struct {
		name   string
		action string
		params map[string]any
		want   string // a problem the verdict must hold; "" for accepted
	}{
		{"asked and required", closed, map[string]any{"title": "t", "body": "b"}, ""},
		{"only the required field", open, map[string]any{"title": "t"}, ""},
		{"asked field the open schema lacks", open, map[string]any{"title": "t", "extra": "x"}, "/extra: additional property not allowed"},
		{"asked field the closed schema lacks", closed, map[string]any{"title": "t", "extra": "x"}, "parameters.extra: not a field to fill: give only the fields title, body"},
		{"registered field not asked", closed, map[string]any{"title": "t", "format": "md"}, "parameters.format: not a field to fill"},
		{"forbidden name", closed, map[string]any{"title": "t", "documentList": []any{"docList:x"}}, "parameters.documentList: forbidden key"},
		{"required field missing", closed, map[string]any{"body": "b"}, `/: missing property "title"`},
		{"wrong type", open, map[string]any{"title": 5}, "/title: want string"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			reg := enginetest.NewRegistry()
			for _, name := range []string{closed, open} {
				reg.Specs = append(reg.Specs, workflow.ActionSpec{Name: name, Description: "Writes a note.",
					Parameters: schema(name == open), Effect: workflow.EffectWrite, Documents: workflow.DocumentsNone})
			}
			cfg := testConfig("a")
			cfg.Approvals = holdAll{}
			model := scripted.New(replies(
				[]string{enginetest.Select(tc.action, "write a note", nil, "", "body", "extra"), enginetest.Params(map[string]any{"title": "first"})},
				enginetest.Completes("ok"))...)
			e := startEngine(t, cfg, memstore.New(), model, reg)
			wf := wait(t, e, create(t, e, "write a note", 5).ID)
			if wf.Status != workflow.StatusAwaitingApproval || wf.Checkpoint == nil || wf.Checkpoint.Selection == nil {
				t.Fatalf("round ended %s (%s), want a pending approval with Stage 1's selection", wf.Status, wf.Error)
			}
			spec, _ := reg.Action(tc.action)
			stage2 := prompts.ParseStage2(enginetest.Params(tc.params), spec, wf.Checkpoint.Selection.ParametersSchema.Fields, reg).Problems

			_, err := e.Decide(context.Background(), "alice", wf.ID, wf.PendingApproval.ID, workflow.Decision{Approve: true, Parameters: tc.params})
			var edit []string
			if pp := (*engine.ParameterProblems)(nil); errors.As(err, &pp) {
				edit = pp.Lines
			} else if err != nil {
				t.Fatalf("Decide: %v, want accepted or invalid parameters", err)
			}

			if diff := cmp.Diff(stage2, edit); diff != "" {
				t.Errorf("Stage 2 reply vs edited approval (-stage2 +edit):\n%s", diff)
			}
			joined := strings.Join(edit, "\n")
			if tc.want == "" && len(edit) != 0 || tc.want != "" && !strings.Contains(joined, tc.want) {
				t.Errorf("edit problems = %q, want %q", edit, tc.want)
			}
		})
	}
}
