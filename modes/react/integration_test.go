package react_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/twostep/twostep/actions"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/workflow"
)

// The React mode with the real action registry and llm's scripted model:
// document.generate produces a document the next step's document.extract
// reads by reference, then workflow.complete answers.
func TestWithRealActionsAndScriptedModel(t *testing.T) {
	t.Parallel()
	model := &scripted.Model{Reply: func(int, workflow.ModelRequest) (string, error) { return "", nil }}
	reg, err := actions.New(actions.Config{}, model)
	if err != nil {
		t.Fatalf("actions.New: %v", err)
	}
	script := scripted.New(
		enginetest.Select("document.generate", "write the note", nil, "", "fileName", "content"),
		enginetest.Params(map[string]any{"fileName": "note.md", "content": "# Note\nNOTE BODY"}),
		enginetest.Select("document.extract", "read it back", []string{"docList:round1_step1_document_generate"}, "", "format"),
		enginetest.Params(map[string]any{"format": "text"}),
		enginetest.Completes("the note says NOTE BODY")[0], enginetest.Completes("the note says NOTE BODY")[1],
	)
	store := newStore()
	e := startEngine(t, testConfig("a"), store, script, reg)
	wf := wait(t, e, create(t, e, "write a note and read it back", 5).ID)
	if wf.Status != workflow.StatusCompleted || wf.Stats.LLMCalls != 6 || wf.Stats.Actions != 2 {
		t.Fatalf("ended %s/%s (%s) with %+v", wf.Status, wf.StopReason, wf.Error, wf.Stats)
	}
	msgs := messages(t, store, wf.ID)
	want := []shape{
		{1, 0, workflow.RoleUser, "", ""},
		{1, 1, workflow.RoleAction, "document.generate", workflow.MessageSuccess},
		{1, 2, workflow.RoleAction, "document.extract", workflow.MessageSuccess},
		{1, 3, workflow.RoleAssistant, "", ""},
	}
	if diff := cmp.Diff(want, shapes(msgs)); diff != "" {
		t.Fatalf("messages (-want +got):\n%s\n%+v", diff, msgs)
	}
	if len(msgs[2].Documents) != 1 {
		t.Fatalf("extract produced %d documents, want 1", len(msgs[2].Documents))
	}
	doc, err := store.DocumentContent(context.Background(), wf.ID, msgs[2].Documents[0].ID)
	if err != nil || !strings.Contains(string(doc.Content), "NOTE BODY") {
		t.Errorf("extracted document %q (%v), want the generated note's text", doc.Content, err)
	}
	if n := len(script.Calls()); n != 6 {
		t.Errorf("%d model calls, want 6", n)
	}
}
