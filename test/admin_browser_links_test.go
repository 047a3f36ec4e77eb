package test

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/twostep/twostep/workflow"
)

// TestAdminPageLinksWorkflows: the page opens the newest workflow at once
// (no click needed) and gives it a URL, and a fork's summary links its
// origin; selecting another changes the URL
// to #/workflows/<id>; loading such a URL opens that workflow.
func TestAdminPageLinksWorkflows(t *testing.T) {
	ctx := browser(t, 60*time.Second)
	env := newAdminEnv(t)
	var ids []string
	for i := range 2 {
		at := time.Date(2026, 11, 22, 10, i, 0, 0, time.UTC)
		wf := &workflow.Workflow{
			ID: workflow.NewID(workflow.PrefixWorkflow), UserID: "alice", Mode: workflow.ModeReact,
			Status: workflow.StatusCompleted, StopReason: workflow.StopCompleted, Round: 1, MaxSteps: 5,
			Title: "workflow " + string(rune('A'+i)), CreatedAt: at, UpdatedAt: at,
		}
		if i == 1 { // the newest is a fork of the older one
			wf.ForkedFrom = workflow.ForkOrigin{WorkflowID: ids[0], Round: 1, Step: 3}
		}
		if _, _, err := env.raw.Commit(context.Background(), workflow.Commit{Workflow: wf}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, wf.ID)
	}
	older, newest := ids[0], ids[1]
	selected := func(id string) chromedp.Action[chromedp.Void] {
		return chromedp.WaitVisible(chromedp.CSS(`#workflows li.selected[data-id="` + id + `"]`))
	}
	hash := func() string { return evaluate[string](ctx, t, `location.hash`) }

	err := chromedp.Do(ctx,
		chromedp.Navigate(env.url+"/admin/"),
		chromedp.WaitVisible(chromedp.CSS(`#token`)),
		chromedp.SendKeys(chromedp.CSS(`#token`), adminRootToken),
		chromedp.Click(chromedp.CSS(`#save-token`)),
		selected(newest),
		chromedp.WaitVisible(chromedp.CSS(`#detail`)),
	)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	if got, want := hash(), "#/workflows/"+newest; got != want {
		t.Errorf("after loading, URL hash %q, want %q", got, want)
	}
	if href := evaluate[string](ctx, t, `document.querySelector('#workflows li[data-id="`+older+`"] a.wf-link').getAttribute('href')`); href != "#/workflows/"+older {
		t.Errorf("the older workflow's link is %q", href)
	}
	// The fork's summary says where it came from and links it.
	if got := evaluate[string](ctx, t, `document.querySelector('#summary .forked-from').textContent`); got != "forked from "+older+" at round 1 step 3" {
		t.Errorf("the fork's summary says %q", got)
	}
	if href := evaluate[string](ctx, t, `document.querySelector('#summary .forked-from a.wf-link').getAttribute('href')`); href != "#/workflows/"+older {
		t.Errorf("the fork's origin links %q", href)
	}

	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#workflows li[data-id="`+older+`"] .wf-title`)), selected(older)); err != nil {
		t.Fatalf("select: %v", err)
	}
	if got, want := hash(), "#/workflows/"+older; got != want {
		t.Errorf("after selecting, URL hash %q, want %q", got, want)
	}

	// A fresh load of the older one's URL opens it, not the newest.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank"), chromedp.Navigate(env.url+"/admin/#/workflows/"+older), selected(older)); err != nil {
		t.Fatalf("load the link: %v", err)
	}
	if n := evaluate[int](ctx, t, `document.querySelectorAll('#workflows li.selected').length`); n != 1 {
		t.Errorf("%d workflows selected after loading a link, want 1", n)
	}
}
