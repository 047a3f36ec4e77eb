package react_test

import (
	"context"
	"strings"
	"testing"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/workflow"
)

// historyHead starts the Stage 1 history's sealed section.
const historyHead = "# Earlier steps (newest first)"

// beforeHistory is every byte of a Stage 1 prompt before its history.
func beforeHistory(t *testing.T, c scripted.Call) string {
	t.Helper()
	text := c.Text()
	i := strings.Index(text, historyHead)
	if i < 0 {
		t.Fatalf("a Stage 1 prompt without %q:\n%s", historyHead, text)
	}
	return text[:i]
}

// The Stage 1 prompts of one workflow's steps share every byte before the
// history, within a round (steps that made documents, a rejected reply
// retried with feedback) and across rounds up to the round's own request
// (DESIGN §10.1); that part is whole messages, which the calls mark as
// their cacheable prefix under the workflow's key. Stage 2's rules are the
// same cacheable first message on every call.
func TestStage1PrefixIsStable(t *testing.T) {
	t.Parallel()
	store := newStore()
	model := scripted.New(replies(
		enginetest.Echoes("one"),
		[]string{enginetest.Select("no.such", "x", nil, "")}, // rejected: retried with feedback
		enginetest.Echoes("two"),
		enginetest.Completes("done"),
		enginetest.Echoes("three"),
		enginetest.Completes("done again"),
	)...)
	e := startEngine(t, testConfig("a"), store, model, enginetest.NewRegistry())
	wf := wait(t, e, create(t, e, "echo twice", 10).ID)
	if _, err := e.StartRound(context.Background(), "alice", wf.ID, engine.NewRound{Prompt: "and once more"}); err != nil {
		t.Fatal(err)
	}
	if wf = wait(t, e, wf.ID); wf.Status != workflow.StatusCompleted || wf.Round != 2 {
		t.Fatalf("workflow ended %s in round %d", wf.Status, wf.Round)
	}
	var first1, first2 *scripted.Call
	stage1 := 0
	for _, c := range model.Calls() {
		switch c.Stage {
		case workflow.StageOne:
			stage1++
			if c.CacheKey != wf.ID+":stage1" || c.CachePrefix != 2 {
				t.Errorf("Stage 1 call: cache key %q, prefix %d; want %q, 2", c.CacheKey, c.CachePrefix, wf.ID+":stage1")
			}
			if !strings.HasPrefix(c.Messages[c.CachePrefix].Content, historyHead) {
				t.Errorf("the message after the cacheable prefix starts %.60q, not with the history", c.Messages[c.CachePrefix].Content)
			}
			if c.CacheSealed != 3 || !strings.HasPrefix(c.Messages[c.CacheSealed].Content, "# Latest steps (newest first)") ||
				!strings.HasSuffix(c.Messages[c.CacheSealed-1].Content, "\n") && !strings.Contains(c.Messages[c.CacheSealed-1].Content, "# Available documents") {
				t.Errorf("Stage 1 call: second cache mark at %d, want 3, after the documents index and before the latest section", c.CacheSealed)
			}
			if first1 == nil {
				first1 = &c
				continue
			}
			got, want := beforeHistory(t, c), beforeHistory(t, *first1)
			if strings.Contains(c.Text(), "and once more") { // round 2: the same up to its request
				_, req, _ := strings.Cut(got, "# User request")
				got, want = strings.TrimSuffix(got, req), strings.TrimSuffix(want, strings.SplitN(want, "# User request", 2)[1])
			}
			if got != want {
				t.Errorf("Stage 1 call %d differs before the history:\n%s\nfirst call:\n%s", stage1, got, want)
			}
		case workflow.StageTwo:
			if c.CacheKey != wf.ID+":stage2" || c.CachePrefix != 1 {
				t.Errorf("Stage 2 call: cache key %q, prefix %d; want %q, 1", c.CacheKey, c.CachePrefix, wf.ID+":stage2")
			}
			if first2 == nil {
				first2 = &c
			} else if c.Messages[0] != first2.Messages[0] {
				t.Errorf("Stage 2's first message changed:\n%s\nfirst call:\n%s", c.Messages[0].Content, first2.Messages[0].Content)
			}
		}
	}
	if stage1 != 6 {
		t.Errorf("%d Stage 1 calls, want 6", stage1)
	}
}
