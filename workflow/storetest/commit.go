package storetest

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/twostep/twostep/workflow"
)

func testCreateAndGet(t *testing.T, f Fixture) {
	ctx := context.Background()
	wf := newWorkflow("alice")
	got, msg, d := create(t, f.Store, wf)

	want := wf.Clone()
	want.Version = 1
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Commit returned workflow (-want +got):\n%s", diff)
	}
	if msg.Seq != 1 || msg.WorkflowID != wf.ID {
		t.Errorf("first message: seq %d workflowId %q, want 1 %q", msg.Seq, msg.WorkflowID, wf.ID)
	}
	read, err := f.Store.GetWorkflow(ctx, wf.ID)
	must(t, "GetWorkflow", err)
	if diff := cmp.Diff(want, read); diff != "" {
		t.Errorf("GetWorkflow (-want +got):\n%s", diff)
	}
	dc, err := f.Store.DocumentContent(ctx, wf.ID, d.ID)
	must(t, "DocumentContent", err)
	if string(dc.Content) != string(d.Content) || dc.WorkflowID != wf.ID || dc.MessageID != msg.ID || dc.Size != int64(len(d.Content)) {
		t.Errorf("DocumentContent = %+v (%q), want the committed document of message %s", dc.Document, dc.Content, msg.ID)
	}
}

func testCreateTwice(t *testing.T, f Fixture) {
	ctx := context.Background()
	wf := newWorkflow("alice")
	create(t, f.Store, wf)
	again := wf.Clone()
	again.Round = 7
	_, _, err := f.Store.Commit(ctx, workflow.Commit{Workflow: again, Messages: []workflow.Message{userMessage("dup")}})
	wantKind(t, "second create", err, workflow.KindConflict)
	got, err := f.Store.GetWorkflow(ctx, wf.ID)
	must(t, "GetWorkflow", err)
	if got.Round != 1 || got.Version != 1 {
		t.Errorf("after failed re-create: round %d version %d, want 1 1", got.Round, got.Version)
	}
	msgs, err := f.Store.Messages(ctx, wf.ID, 0, 0)
	must(t, "Messages", err)
	if len(msgs) != 1 {
		t.Errorf("after failed re-create: %d messages, want 1", len(msgs))
	}

	// The id is taken for every user: another user's create of it
	// conflicts too and leaves the first workflow alone.
	theirs := wf.Clone()
	theirs.UserID = "mallory"
	theirs.Round = 9
	_, _, err = f.Store.Commit(ctx, workflow.Commit{Workflow: theirs, Messages: []workflow.Message{userMessage("dup")}})
	wantKind(t, "create of the same id by another user", err, workflow.KindConflict)
	got, err = f.Store.GetWorkflow(ctx, wf.ID)
	must(t, "GetWorkflow", err)
	if got.UserID != "alice" || got.Round != 1 {
		t.Errorf("after another user's create: user %q round %d, want alice 1", got.UserID, got.Round)
	}
	list, _, err := f.Store.ListWorkflows(ctx, "mallory", workflow.Page{})
	must(t, "ListWorkflows(mallory)", err)
	if len(list) != 0 {
		t.Errorf("mallory lists %d workflows, want 0", len(list))
	}
}

func testStaleVersion(t *testing.T, f Fixture) {
	ctx := context.Background()
	v1, _, _ := create(t, f.Store, newWorkflow("alice"))
	v2, _ := step(t, f.Store, v1, "one")
	if v2.Version != 2 {
		t.Fatalf("version after one step = %d, want 2", v2.Version)
	}
	stale := v1.Clone()
	stale.Step = 99
	given := stale.Clone()
	d := document("stale.txt", []byte("stale"))
	_, _, err := f.Store.Commit(ctx, workflow.Commit{
		Workflow: stale, ExpectedVersion: 1,
		Messages: []workflow.Message{userMessage("stale", d)}, Documents: []workflow.DocumentContent{d},
	})
	wantKind(t, "stale commit", err, workflow.KindConflict)
	// A refused commit can be retried as it is (workflow.Store.Commit).
	if diff := cmp.Diff(given, stale); diff != "" {
		t.Errorf("the stale commit changed the workflow it was given (-before +after):\n%s", diff)
	}
	got, err := f.Store.GetWorkflow(ctx, v1.ID)
	must(t, "GetWorkflow", err)
	if got.Version != 2 || got.Step != v2.Step {
		t.Errorf("after stale commit: version %d step %d, want 2 %d", got.Version, got.Step, v2.Step)
	}
	msgs, err := f.Store.Messages(ctx, v1.ID, 0, 0)
	must(t, "Messages", err)
	if len(msgs) != 2 {
		t.Errorf("after stale commit: %d messages, want 2", len(msgs))
	}
	_, err = f.Store.DocumentContent(ctx, v1.ID, d.ID)
	wantKind(t, "document of the stale commit", err, workflow.KindNotFound)
	_, _, err = f.Store.Commit(ctx, workflow.Commit{Workflow: newWorkflow("alice"), ExpectedVersion: 3})
	wantKind(t, "update of a missing workflow", err, workflow.KindNotFound)
}

func testCheckpointRoundTrip(t *testing.T, f Fixture) {
	ctx := context.Background()
	wf := newWorkflow("alice")
	wf.Error = "boom"
	wf.StopReason = workflow.StopLLMError
	wf.Stats = workflow.Stats{LLMCalls: 3, PromptTokens: 120, CompletionTokens: 45, Actions: 2,
		ByStage: workflow.StageTableOf(map[workflow.Stage]workflow.StageStats{
			workflow.StageOne: {Calls: 2, PromptTokens: 100, CompletionTokens: 40, CachedTokens: 64},
			workflow.StageTwo: {Calls: 1, PromptTokens: 20, CompletionTokens: 5},
			// A stage this version does not know (a later version's).
			"later": {Calls: 1, PromptTokens: 7, CompletionTokens: 1},
		})}
	wf.TraceContext = workflow.TraceContext{
		Origin: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		Round:  "00-4bf92f3577b34da6a3ce929d0e0e4736-53995c3f42cd8ad8-01",
	}
	wf.Checkpoint = &workflow.Checkpoint{
		Phase: workflow.PhaseExecute,
		Selection: &workflow.Selection{
			Action:                 "document.extract",
			ActionObjective:        "pull the totals",
			Learnings:              []string{"invoice is in EUR"},
			RequiredInputDocuments: []string{"docItem:doc_x:a.pdf"},
			RequiredConnection:     "crm",
			ParametersContext:      "totals only",
			ParametersSchema: workflow.ParametersSchema{Fields: []workflow.FieldSpec{
				{Name: "fields", Type: "object", Required: true, Description: "what to pull"},
			}},
		},
		Parameters: map[string]any{"fields": map[string]any{"total": true, "n": 2.5}, "tags": []any{"a", "b"}},
		Failures:   1,
		Attempt:    2,
		Feedback:   []string{"/fields: missing property", "Stage 1 named \"x\""},
		// a mode's own state, as actionplan stores its plan
		Mode: workflow.ModeState(`{"plan":[{"action":"ai.process","parameters":{"q":"x"},"resultLabel":"r","documents":["docList:l"]}],"planIndex":1}`),
	}
	got, _, _ := create(t, f.Store, wf)
	read, err := f.Store.GetWorkflow(ctx, wf.ID)
	must(t, "GetWorkflow", err)
	want := wf.Clone()
	want.Version = 1
	for name, w := range map[string]*workflow.Workflow{"Commit": got, "GetWorkflow": read} {
		if diff := cmp.Diff(want, w); diff != "" {
			t.Errorf("%s checkpoint round trip (-want +got):\n%s", name, diff)
		}
	}
	next, _ := step(t, f.Store, read, "after checkpoint")
	if next.Version != 2 || next.Checkpoint == nil || next.Checkpoint.Phase != workflow.PhaseExecute {
		t.Errorf("next commit: version %d checkpoint %+v, want 2 and the checkpoint kept", next.Version, next.Checkpoint)
	}
}

func testReturnsCopies(t *testing.T, f Fixture) {
	ctx := context.Background()
	wf := newWorkflow("alice")
	wf.Checkpoint = &workflow.Checkpoint{Phase: workflow.PhaseSelect, Parameters: map[string]any{"k": "v"}}
	d := document("a.txt", []byte("original"))
	m := userMessage("hi", d)
	got, msgs, err := f.Store.Commit(ctx, workflow.Commit{Workflow: wf, Messages: []workflow.Message{m}, Documents: []workflow.DocumentContent{d}})
	must(t, "Commit", err)

	// Change everything the caller holds: the input and the results.
	wf.Checkpoint.Parameters["k"] = "input changed"
	d.Content[0] = 'X'
	m.Documents[0].Name = "input changed"
	got.Checkpoint.Parameters["k"] = "result changed"
	msgs[0].Documents[0].Name = "result changed"
	dc, err := f.Store.DocumentContent(ctx, wf.ID, d.ID)
	must(t, "DocumentContent", err)
	dc.Content[1] = 'Y'

	read, err := f.Store.GetWorkflow(ctx, wf.ID)
	must(t, "GetWorkflow", err)
	if v := read.Checkpoint.Parameters["k"]; v != "v" {
		t.Errorf("stored checkpoint parameter = %v, want %q", v, "v")
	}
	stored, err := f.Store.Messages(ctx, wf.ID, 0, 0)
	must(t, "Messages", err)
	if n := stored[0].Documents[0].Name; n != "a.txt" {
		t.Errorf("stored message document name = %q, want a.txt", n)
	}
	again, err := f.Store.DocumentContent(ctx, wf.ID, d.ID)
	must(t, "DocumentContent", err)
	if string(again.Content) != "original" {
		t.Errorf("stored document content = %q, want %q", again.Content, "original")
	}
}

func testUserCannotChange(t *testing.T, f Fixture) {
	ctx := context.Background()
	v1, _, _ := create(t, f.Store, newWorkflow("alice"))
	moved := v1.Clone()
	moved.UserID = "mallory"
	_, _, err := f.Store.Commit(ctx, workflow.Commit{Workflow: moved, ExpectedVersion: 1})
	wantKind(t, "commit moving the workflow to another user", err, workflow.KindInvalid)
	list, _, err := f.Store.ListWorkflows(ctx, "mallory", workflow.Page{})
	must(t, "ListWorkflows", err)
	if len(list) != 0 {
		t.Errorf("mallory lists %d workflows, want 0", len(list))
	}
}
