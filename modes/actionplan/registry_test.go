package actionplan_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/twostep/twostep/actions"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/workflow"
)

// With the real actions registry and the llm package's scripted model: the
// registry's JSON Schemas drop a step with a missing required parameter,
// a generated document is read by a later step through its resultLabel,
// and workflow.complete ends the round with its message.
func TestRealRegistryRound(t *testing.T) {
	t.Parallel()
	reg, err := actions.New(actions.Config{}, nil)
	if err != nil {
		t.Fatalf("actions.New: %v", err)
	}
	plan := planJSON(
		step{Action: actions.GenerateAction, Parameters: map[string]any{"fileName": "notes.md"}},
		step{Action: actions.GenerateAction, Parameters: map[string]any{"fileName": "notes.md", "content": "# Notes\nship it"}, ResultLabel: "notes"},
		step{Action: actions.ExtractAction, Parameters: map[string]any{"documentList": []string{"docList:notes"}}, ResultLabel: "notes_text"},
		complete("The notes say: ship it."),
	)
	model := scripted.New("```json\n" + plan + "\n```")
	store := newStore()
	e := startEngine(t, testConfig("a"), store, model, reg)
	wf := wait(t, e, create(t, e, "write notes, extract them and tell me what they say", 5).ID)
	if wf.Status != workflow.StatusCompleted || wf.StopReason != workflow.StopCompleted || wf.Stats.Actions != 2 {
		t.Fatalf("ended %s/%s (%s) with %d actions, want completed with 2", wf.Status, wf.StopReason, wf.Error, wf.Stats.Actions)
	}
	msgs := messages(t, store, wf.ID)
	want := []shape{
		{1, 0, workflow.RoleUser, "", ""},
		{1, 1, workflow.RoleAction, actions.GenerateAction, workflow.MessageSuccess},
		{1, 2, workflow.RoleAction, actions.ExtractAction, workflow.MessageSuccess},
		{1, 3, workflow.RoleAssistant, "", ""},
	}
	if diff := cmp.Diff(want, shapes(msgs)); diff != "" {
		t.Fatalf("messages (-want +got):\n%s", diff)
	}
	if msgs[1].DocumentsLabel != "notes" || msgs[2].DocumentsLabel != "notes_text" || !strings.Contains(msgs[2].Text, "ship it") {
		t.Errorf("labels %q, %q; extract text %q", msgs[1].DocumentsLabel, msgs[2].DocumentsLabel, msgs[2].Text)
	}
	if msgs[3].Text != "The notes say: ship it." {
		t.Errorf("final message = %q", msgs[3].Text)
	}
	tr := modelTraces(t, store, wf.ID)
	if len(tr) != 1 || !strings.Contains(tr[0].Error, "step 1 (document.generate) dropped") || !strings.Contains(tr[0].Error, "content") {
		t.Errorf("plan trace error = %q, want step 1 dropped for its missing content", tr[0].Error)
	}
	if calls := model.Calls(); len(calls) != 1 || calls[0].Stage != workflow.StagePlan || calls[0].JSON {
		t.Errorf("model calls = %+v, want one plan call without JSON-object mode (the plan is an array)", calls)
	}
}
