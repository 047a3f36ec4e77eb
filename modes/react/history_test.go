package react_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/workflow"
)

// The Stage 1 prompt of round 2 shows the history newest first: this
// round's messages newest to oldest, then round 1's.
func TestHistoryNewestFirstAcrossRounds(t *testing.T) {
	t.Parallel()
	store := newStore()
	model := scripted.New(replies(
		enginetest.Echoes("R1ALPHA"), enginetest.Completes("R1DONE"),
		enginetest.Echoes("R2BETA"), enginetest.Completes("R2DONE"))...)
	e := startEngine(t, testConfig("a"), store, model, enginetest.NewRegistry())
	wf := wait(t, e, create(t, e, "ROUND1PROMPT", 5).ID)
	if _, err := e.StartRound(context.Background(), "alice", wf.ID, engine.NewRound{Prompt: "ROUND2PROMPT"}); err != nil {
		t.Fatalf("StartRound: %v", err)
	}
	wf = wait(t, e, wf.ID)
	if wf.Round != 2 || wf.Status != workflow.StatusCompleted {
		t.Fatalf("round %d %s, want round 2 completed", wf.Round, wf.Status)
	}
	calls := model.Calls()
	if len(calls) != 8 {
		t.Fatalf("%d model calls, want 8", len(calls))
	}
	prompt := calls[6].Text() // round 2, step 2, Stage 1
	// Round 1 was sealed when round 2 started: its entries are in the
	// sealed section, round 2's in the latest, each newest first.
	_, history, _ := strings.Cut(prompt, "# Earlier steps (newest first)")
	sealed, latest, _ := strings.Cut(history, "# Latest steps (newest first)")
	for _, sec := range []struct {
		text  string
		order []string
	}{{latest, []string{"R2BETA", "ROUND2PROMPT"}}, {sealed, []string{"R1DONE", "R1ALPHA", "ROUND1PROMPT"}}} {
		last := -1
		for _, marker := range sec.order {
			i := strings.Index(sec.text, marker)
			if i < 0 {
				t.Fatalf("round 2 Stage 1 prompt lacks %s in its section:\n%s", marker, prompt)
			}
			if i < last {
				t.Errorf("%s appears before the newer entries: want order %v in:\n%s", marker, sec.order, prompt)
			}
			last = i
		}
	}
	if p := calls[4].Text(); !strings.Contains(p, "ROUND2PROMPT") || !strings.Contains(p, "R1DONE") {
		t.Errorf("round 2's first Stage 1 prompt lacks its prompt or round 1's answer")
	}
	if p := calls[5].Text(); strings.Contains(p, "ROUND2PROMPT") || strings.Contains(p, "R1DONE") {
		t.Errorf("Stage 2 prompt carries the user prompt or history:\n%s", p)
	}
}

// Stage 1's document references and connection are resolved server-side
// and handed to the action; the action sees bytes, not references.
func TestReferencesResolvedAtExecute(t *testing.T) {
	t.Parallel()
	store, reg := newStore(), enginetest.NewRegistry()
	refPattern := regexp.MustCompile(`docList:msg_[0-9a-z]+:round1_user_context`)
	var script *scripted.Model
	model := &scripted.Model{Reply: func(n int, req workflow.ModelRequest) (string, error) {
		if n == 0 { // copy the reference from the documents index, as a model would
			var prompt string
			for _, m := range req.Messages {
				prompt += m.Content
			}
			ref := refPattern.FindString(prompt)
			script = scripted.New(replies(
				[]string{enginetest.Select(enginetest.Echo, "read", []string{ref}, "", "text"), enginetest.Params(map[string]any{"text": "x"})},
				[]string{enginetest.Select(enginetest.Remote, "call crm", nil, "crm"), enginetest.Params(map[string]any{})},
				enginetest.Completes("ok"))...)
		}
		return script.Reply(n, req)
	}}
	e := startEngine(t, testConfig("a"), store, model, reg)
	wf, err := e.Create(context.Background(), engine.NewWorkflow{
		UserID: "alice", Prompt: "use the file", MaxSteps: 5,
		Documents: []workflow.DocumentContent{{Document: workflow.Document{Name: "in.txt", MimeType: "text/plain"}, Content: []byte("INPUT BYTES")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := wait(t, e, wf.ID)
	if got.Status != workflow.StatusCompleted {
		t.Fatalf("ended %s (%s)", got.Status, got.Error)
	}
	calls := reg.Calls()
	if len(calls) != 2 {
		t.Fatalf("%d executions, want 2", len(calls))
	}
	if d := calls[0].Documents; len(d) != 1 || string(d[0].Content) != "INPUT BYTES" || d[0].Name != "in.txt" {
		t.Errorf("echo got documents %+v, want the upload with its bytes", d)
	}
	if c := calls[1].Connection; c == nil || c.Label != "crm" || calls[1].UserID != "alice" {
		t.Errorf("remote got connection %+v, want alice's crm", c)
	}
	// Both steps ran under the one lease: the same positive fencing token
	// beside each step's own idempotency key.
	if f := calls[0].FencingToken; f <= 0 || calls[1].FencingToken != f ||
		calls[0].IdempotencyKey == calls[1].IdempotencyKey {
		t.Errorf("fencing tokens %d, %d and keys %q, %q; want one positive token, two keys",
			calls[0].FencingToken, calls[1].FencingToken, calls[0].IdempotencyKey, calls[1].IdempotencyKey)
	}
}
