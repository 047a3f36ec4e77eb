package agui_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/twostep/twostep/agui"
	"github.com/twostep/twostep/workflow"
)

// TestRunStreamsTheAnswer: a new thread starts a workflow from the last
// user message; the answer's deltas arrive as TEXT_MESSAGE_CONTENT while
// Stage 2 writes it, the committed text's rest follows, and the pieces
// together are the committed message; a second run of the thread is a
// new round of the same workflow, its unstreamed answer sent whole.
func TestRunStreamsTheAnswer(t *testing.T) {
	t.Parallel()
	g := newGateway(t, "", chooseAnswer, "", chooseAnswer, answer("Again."))
	events, status := g.run(t, alice, userRun("thread-1", "Say hello"))
	if status != 200 {
		t.Fatalf("status %d", status)
	}
	start := expect(t, events, agui.RunStarted, agui.StateSnapshot)
	if start[0].ThreadID != "thread-1" || start[0].RunID == "" {
		t.Errorf("RUN_STARTED %+v does not echo the thread and run", start[0])
	}
	wfID := start[1].Snapshot.WorkflowID
	// Stage 2 is waiting for its reply: the deltas stream it.
	for _, p := range []string{"Hel", "lo"} {
		g.Deltas.PublishDelta(workflow.Delta{WorkflowID: wfID, UserID: "alice", Round: 1, Step: 1, Stage: workflow.StageTwo, Field: "message", Text: p})
	}
	// Stage 1's objective and another round's pieces are no AG-UI event.
	g.Deltas.PublishDelta(workflow.Delta{WorkflowID: wfID, Round: 1, Step: 1, Stage: workflow.StageOne, Field: "actionObjective", Text: "answer"})
	g.Deltas.PublishDelta(workflow.Delta{WorkflowID: wfID, Round: 7, Step: 1, Stage: workflow.StageTwo, Field: "message", Text: "stale"})
	streamed := expect(t, events, agui.TextMessageStart, agui.TextMessageContent, agui.TextMessageContent)
	if streamed[0].Role != "assistant" || streamed[1].MessageID != streamed[0].MessageID {
		t.Errorf("text message %+v, %+v", streamed[0], streamed[1])
	}
	g.release <- answer("Hello, world.")
	tail := rest(events)
	if got := typesOf(tail); got != "TEXT_MESSAGE_CONTENT TEXT_MESSAGE_END STATE_SNAPSHOT RUN_FINISHED" {
		t.Fatalf("after the deltas: %s", got)
	}
	text := streamed[1].Delta + streamed[2].Delta + tail[0].Delta
	wf, msgs, err := g.Engine.Messages(t.Context(), "alice", wfID, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if last := msgs[len(msgs)-1]; text != last.Text || last.Text != "Hello, world." {
		t.Errorf("the pieces read %q; the committed answer is %q", text, last.Text)
	}
	if msgs[0].Text != "Say hello" {
		t.Errorf("the workflow started from %q, want the last user message", msgs[0].Text)
	}
	fin := tail[3]
	if fin.Outcome == nil || fin.Outcome.Type != "success" || fin.Result.WorkflowID != wfID || tail[2].Snapshot.Status != "completed" || wf.Status != workflow.StatusCompleted {
		t.Errorf("RUN_FINISHED %+v, snapshot %+v", fin, tail[2].Snapshot)
	}

	events, _ = g.run(t, alice, userRun("thread-1", "Once more"))
	all := rest(events)
	if got := typesOf(all); got != "RUN_STARTED STATE_SNAPSHOT TEXT_MESSAGE_START TEXT_MESSAGE_CONTENT TEXT_MESSAGE_END STATE_SNAPSHOT RUN_FINISHED" {
		t.Fatalf("second run: %s", got)
	}
	if all[1].Snapshot.WorkflowID != wfID || all[5].Snapshot.Round != 2 || all[3].Delta != "Again." {
		t.Errorf("second run: snapshot %+v, then %+v, answer %q; want round 2 of %s", all[1].Snapshot, all[5].Snapshot, all[3].Delta, wfID)
	}
}

// TestApprovalIsAnInterrupt: a call that needs approval ends the run
// with the tool call and an interrupt naming the approval; a resume
// naming another interrupt, or with edited parameters the action's schema
// refuses, is a RUN_ERROR and leaves the approval pending; approving it
// continues the paused round, whose tool result and answer follow.
func TestApprovalIsAnInterrupt(t *testing.T) {
	t.Parallel()
	g := newGateway(t, "approvals:\n  actions:\n    document.generate: always\n", chooseNote, noteParams, chooseAnswer, answer("Written."))
	events, _ := g.run(t, alice, userRun("notes", "Write a note"))
	all := rest(events)
	want := "RUN_STARTED STATE_SNAPSHOT STEP_STARTED TOOL_CALL_START TOOL_CALL_ARGS TOOL_CALL_END STEP_FINISHED STATE_SNAPSHOT RUN_FINISHED"
	if got := typesOf(all); got != want {
		t.Fatalf("first run: %s\nwant %s", got, want)
	}
	call, fin := all[3], all[8]
	if all[2].StepName != "document.generate" || call.ToolCallName != "document.generate" || all[4].Delta != `{"content":"# Note","fileName":"note.md"}` {
		t.Errorf("tool call %+v, args %q", call, all[4].Delta)
	}
	if fin.Outcome == nil || fin.Outcome.Type != "interrupt" || len(fin.Outcome.Interrupts) != 1 {
		t.Fatalf("RUN_FINISHED %+v, want an interrupt outcome", fin)
	}
	in := fin.Outcome.Interrupts[0]
	wf, err := g.Engine.Get(t.Context(), "alice", all[1].Snapshot.WorkflowID)
	if err != nil || wf.PendingApproval == nil {
		t.Fatalf("workflow %+v, %v", wf, err)
	}
	if in.ID != wf.PendingApproval.ID || in.Reason != "approval" || in.ToolCallID != call.ToolCallID || in.ResponseSchema == nil || in.Message == "" {
		t.Errorf("interrupt %+v, pending approval %s", in, wf.PendingApproval.ID)
	}

	resume := func(entry map[string]any) []agui.Event {
		run := userRun("notes", "Write a note")
		run["resume"] = []any{entry}
		events, status := g.run(t, alice, run)
		if status != 200 {
			t.Fatalf("resume: status %d", status)
		}
		return rest(events)
	}
	for name, entry := range map[string]map[string]any{
		"unknown interrupt": {"interruptId": "apr_unknown", "status": "resolved", "payload": map[string]any{"decision": "approve"}},
		"invalid edit":      {"interruptId": in.ID, "status": "resolved", "payload": map[string]any{"decision": "approve", "parameters": map[string]any{"fileName": 7, "content": "x"}}},
		"no decision":       {"interruptId": in.ID, "status": "resolved", "payload": map[string]any{"verdict": "yes"}},
	} {
		got := resume(entry)
		if typesOf(got) != "RUN_STARTED RUN_ERROR" || got[1].Message == "" || got[1].Code == "" {
			t.Errorf("%s: %s %+v, want RUN_STARTED then RUN_ERROR", name, typesOf(got), got)
		}
	}
	if wf, _ = g.Engine.Get(t.Context(), "alice", wf.ID); wf.PendingApproval == nil || wf.PendingApproval.ID != in.ID {
		t.Fatal("a refused resume decided the approval")
	}

	done := resume(map[string]any{"interruptId": in.ID, "status": "resolved", "payload": map[string]any{"decision": "approve"}})
	want = "RUN_STARTED STATE_SNAPSHOT STEP_STARTED TOOL_CALL_RESULT STEP_FINISHED TEXT_MESSAGE_START TEXT_MESSAGE_CONTENT TEXT_MESSAGE_END STATE_SNAPSHOT RUN_FINISHED"
	if got := typesOf(done); got != want {
		t.Fatalf("resumed run: %s\nwant %s", got, want)
	}
	if r := done[3]; r.ToolCallID != call.ToolCallID || r.Content == nil || r.Role != "tool" || r.MessageID == "" {
		t.Errorf("TOOL_CALL_RESULT %+v, want the interrupted call's", r)
	}
	if done[6].Delta != "Written." || done[9].Outcome.Type != "success" {
		t.Errorf("answer %q, outcome %+v", done[6].Delta, done[9].Outcome)
	}
}

// TestIntentIsAnInterrupt: an intent approval (before Stage 2) ends the
// run with reason intent and no tool call; cancelling it rejects it and
// the round goes on.
func TestIntentIsAnInterrupt(t *testing.T) {
	t.Parallel()
	g := newGateway(t, "approvals:\n  actions:\n    document.generate: intent\n", chooseNote, chooseAnswer, answer("Not written."))
	events, _ := g.run(t, alice, userRun("intent", "Write a note"))
	all := rest(events)
	if got := typesOf(all); got != "RUN_STARTED STATE_SNAPSHOT STATE_SNAPSHOT RUN_FINISHED" {
		t.Fatalf("first run: %s", got)
	}
	in := all[3].Outcome.Interrupts[0]
	if in.Reason != "intent" || in.ToolCallID == "" {
		t.Errorf("interrupt %+v, want reason intent naming the call to come", in)
	}
	run := userRun("intent", "ignored")
	run["resume"] = []any{map[string]any{"interruptId": in.ID, "status": "cancelled"}}
	events, _ = g.run(t, alice, run)
	done := rest(events)
	if last := done[len(done)-1]; last.Type != agui.RunFinished || last.Outcome.Type != "success" {
		t.Fatalf("after cancelling: %s", typesOf(done))
	}
	// The rejected step is recorded as the step's action message: a
	// call without arguments whose result says it was rejected.
	want := "RUN_STARTED STATE_SNAPSHOT STEP_STARTED TOOL_CALL_START TOOL_CALL_END TOOL_CALL_RESULT STEP_FINISHED TEXT_MESSAGE_START TEXT_MESSAGE_CONTENT TEXT_MESSAGE_END STATE_SNAPSHOT RUN_FINISHED"
	if got := typesOf(done); got != want {
		t.Errorf("after cancelling: %s\nwant %s", got, want)
	}
	if r := done[5]; r.ToolCallID != in.ToolCallID || r.Content == nil || !strings.Contains(strings.ToLower(*r.Content), "reject") {
		t.Errorf("the rejected step's result %+v, want the interrupt's call saying it was rejected", r)
	}
}

// TestAnotherUsersThreadIsUnknown: bob's run of alice's thread id starts
// bob's own workflow, and his resume of it names no interrupt of his.
func TestAnotherUsersThreadIsUnknown(t *testing.T) {
	t.Parallel()
	g := newGateway(t, "", chooseAnswer, answer("Alice's."), chooseAnswer, answer("Bob's."))
	events, _ := g.run(t, alice, userRun("shared-name", "hi"))
	aliceRun := rest(events)
	run := userRun("shared-name", "hi")
	run["resume"] = []any{map[string]any{"interruptId": "apr_x", "status": "cancelled"}}
	events, _ = g.run(t, bob, run)
	if got := rest(events); typesOf(got) != "RUN_STARTED RUN_ERROR" || got[1].Code != "unknown_interrupt" {
		t.Errorf("bob's resume of a thread he never ran: %s %+v", typesOf(got), got)
	}
	events, _ = g.run(t, bob, userRun("shared-name", "hi"))
	bobRun := rest(events)
	if len(aliceRun) < 2 || len(bobRun) < 2 || aliceRun[1].Snapshot == nil || bobRun[1].Snapshot == nil {
		t.Fatalf("alice's run %s %+v, bob's %s %+v", typesOf(aliceRun), aliceRun, typesOf(bobRun), bobRun)
	}
	if aliceRun[1].Snapshot.WorkflowID == bobRun[1].Snapshot.WorkflowID || bobRun[1].Snapshot.Round != 1 {
		t.Errorf("bob's thread is alice's workflow %s (round %d)", bobRun[1].Snapshot.WorkflowID, bobRun[1].Snapshot.Round)
	}
	if _, err := g.Engine.Get(t.Context(), "bob", aliceRun[1].Snapshot.WorkflowID); workflow.KindOf(err) != workflow.KindNotFound {
		t.Errorf("bob reads alice's workflow: %v", err)
	}
}

// TestBusyThread: while the thread's round runs, a run is refused with
// 409 (onBusy reject, the default) or, with onBusy enqueue, follows the
// queued round to its answer.
func TestBusyThread(t *testing.T) {
	t.Parallel()
	g := newGateway(t, "", chooseAnswer, "", chooseAnswer, answer("Second."))
	first, _ := g.run(t, alice, userRun("busy", "first"))
	expect(t, first, agui.RunStarted, agui.StateSnapshot)
	if _, status := g.run(t, alice, userRun("busy", "second")); status != http.StatusConflict {
		t.Errorf("a run of a busy thread answered %d, want 409", status)
	}
	run := userRun("busy", "second")
	run["forwardedProps"] = map[string]any{"twostep": map[string]any{"onBusy": "enqueue"}}
	second, status := g.run(t, alice, run)
	if status != 200 {
		t.Fatalf("enqueue: status %d", status)
	}
	expect(t, second, agui.RunStarted, agui.StateSnapshot)
	g.release <- answer("First.")
	if got := rest(first); got[len(got)-1].Type != agui.RunFinished {
		t.Fatalf("first run: %s", typesOf(got))
	}
	got := rest(second)
	if typesOf(got) != "TEXT_MESSAGE_START TEXT_MESSAGE_CONTENT TEXT_MESSAGE_END STATE_SNAPSHOT RUN_FINISHED" || got[1].Delta != "Second." || got[3].Snapshot.Round != 2 {
		t.Errorf("queued run: %s %+v", typesOf(got), got)
	}
}
