package test

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/workflow"
)

// TestAdminPageShowsAnAnswerAsItStreams: while Stage 2 writes a running
// round's answer, the workflow's page shows the pieces as they arrive
// (delta events), and the committed answer replaces them.
func TestAdminPageShowsAnAnswerAsItStreams(t *testing.T) {
	ctx := browser(t, 90*time.Second)
	env := newAdminEnv(t)
	env.script.push(workflow.StageOne, enginetest.Completes("done")[0])
	env.script.blockWhenEmpty(workflow.StageTwo)
	id := env.create(t, "Greet the walrus")
	env.waitCalls(t, 2) // Stage 1, then the held Stage 2

	err := chromedp.Do(ctx,
		chromedp.Navigate(env.url+"/admin/"),
		chromedp.WaitVisible(chromedp.CSS(`#token`)),
		chromedp.SendKeys(chromedp.CSS(`#token`), adminRootToken),
		chromedp.Click(chromedp.CSS(`#save-token`)),
		chromedp.WaitVisible(chromedp.CSS(`#workflows li[data-id="`+id+`"]`)),
		chromedp.Click(chromedp.CSS(`#workflows li[data-id="`+id+`"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#live`)),
	)
	if err != nil {
		t.Fatalf("open the running workflow: %v", err)
	}
	// The page's event stream subscribes before it reads the store.
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for !env.deltas.Watched(id) {
		select {
		case <-wctx.Done():
			t.Fatal("the page's event stream never subscribed to deltas")
		case <-time.After(5 * time.Millisecond):
		}
	}
	for _, piece := range []string{"Hello, ", "walrus", "!"} {
		env.deltas.PublishDelta(workflow.Delta{WorkflowID: id, UserID: "alice", Round: 1, Step: 1, Stage: workflow.StageTwo, Field: "message", Text: piece})
	}
	err = chromedp.Do(ctx, chromedp.Poll[chromedp.Void](`document.getElementById('streaming-text').textContent === 'Hello, walrus!'`,
		chromedp.WithPollingTimeout(30*time.Second)))
	if err != nil {
		t.Fatalf("the streamed pieces never showed: %v (shown: %q)", err,
			evaluate[string](ctx, t, `document.getElementById('streaming-text').textContent`))
	}
	if what := evaluate[string](ctx, t, `document.getElementById('streaming-what').textContent`); what != "streaming: round 1 step 1 · stage2 message" {
		t.Errorf("streaming label = %q", what)
	}
	env.stop(t, id)
	err = chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`#summary .badge.stopped`)),
		chromedp.Poll[chromedp.Void](`document.getElementById('streaming').hidden`, chromedp.WithPollingTimeout(30*time.Second)))
	if err != nil {
		t.Fatalf("the streamed text stayed after the round ended: %v", err)
	}
}
