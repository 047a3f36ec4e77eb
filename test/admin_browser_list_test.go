package test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/twostep/twostep/workflow"
)

// TestAdminPageListsEveryUserWithPaging: the viewer lists the workflows of
// users who are in no token list, 100 at a time, and "Load more" appends
// the next page from the listing's cursor.
func TestAdminPageListsEveryUserWithPaging(t *testing.T) {
	ctx := browser(t, 60*time.Second)
	env := newAdminEnv(t)
	const total = 103
	for i := range total {
		at := time.Date(2026, 11, 22, 10, 0, i, 0, time.UTC)
		wf := &workflow.Workflow{
			ID: workflow.NewID(workflow.PrefixWorkflow), UserID: fmt.Sprintf("tenant-%d", i%7), Mode: workflow.ModeReact,
			Status: workflow.StatusCompleted, StopReason: workflow.StopCompleted, Round: 1, MaxSteps: 5,
			CreatedAt: at, UpdatedAt: at,
		}
		if _, _, err := env.raw.Commit(context.Background(), workflow.Commit{Workflow: wf}); err != nil {
			t.Fatal(err)
		}
	}
	rows := `document.querySelectorAll('#workflows li').length`
	err := chromedp.Do(ctx,
		chromedp.Navigate(env.url+"/admin/"),
		chromedp.WaitVisible(chromedp.CSS(`#token`)),
		chromedp.SendKeys(chromedp.CSS(`#token`), adminRootToken),
		chromedp.Click(chromedp.CSS(`#save-token`)),
		chromedp.WaitVisible(chromedp.CSS(`#more`)),
	)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	if n := evaluate[int](ctx, t, rows); n != 100 {
		t.Fatalf("first page shows %d workflows, want 100", n)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#more`)), chromedp.WaitNotVisible(chromedp.CSS(`#more`))); err != nil {
		t.Fatalf("load more: %v", err)
	}
	if n := evaluate[int](ctx, t, rows); n != total {
		t.Errorf("after load more %d workflows, want %d", n, total)
	}
	distinct := evaluate[int](ctx, t, `new Set(Array.from(document.querySelectorAll('#workflows li')).map(li => li.dataset.id)).size`)
	if distinct != total {
		t.Errorf("%d distinct workflows listed, want %d (a page repeated or skipped)", distinct, total)
	}
}
