package test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/workflow"
)

// TestAdminPageFindsFiltersAndFollows is the viewer with more than a
// handful of workflows: the list shows each one's title, filters by
// status and finds a workflow by its prompt text; a retried Stage 1 call
// shows its feedback and only what changed since attempt 1; Stage 2 shows
// the parameters parsed from its reply; and a running round's page updates
// by itself when the round ends.
func TestAdminPageFindsFiltersAndFollows(t *testing.T) {
	ctx := browser(t, 90*time.Second)
	env := newAdminEnv(t)

	// A completed workflow whose first Stage 1 reply is rejected.
	env.script.push(workflow.StageOne, `{"action": "no.such.action", "actionObjective": "x"}`,
		generate("write the note"), enginetest.Completes("done")[0])
	env.script.push(workflow.StageTwo, generateParams("note.md", "# Note"), enginetest.Completes("done")[1])
	done := env.create(t, "Draft the quarterly pelican report\nwith every figure")
	if wf := env.wait(t, done); wf.Status != workflow.StatusCompleted {
		t.Fatalf("status %s (%s)", wf.Status, wf.Error)
	}
	// A running workflow, held in Stage 2 until it is stopped.
	env.script.push(workflow.StageOne, generate("write another"))
	env.script.blockWhenEmpty(workflow.StageTwo)
	running := env.create(t, "Summarise the walrus census")
	env.waitCalls(t, 7) // 5 for the first workflow, then its Stage 1 and the held Stage 2

	row := func(id string) string { return `#workflows li[data-id="` + id + `"]` }
	rows := `Array.from(document.querySelectorAll('#workflows li')).map(li => li.dataset.id)`
	err := chromedp.Do(ctx,
		chromedp.Navigate(env.url+"/admin/"),
		chromedp.WaitVisible(chromedp.CSS(`#token`)),
		chromedp.SendKeys(chromedp.CSS(`#token`), adminRootToken),
		chromedp.Click(chromedp.CSS(`#save-token`)),
		chromedp.WaitVisible(chromedp.CSS(row(running))),
	)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	if title := evaluate[string](ctx, t, `document.querySelector('`+row(done)+` .wf-title').textContent`); title != "Draft the quarterly pelican report" {
		t.Errorf("list title = %q, want the first prompt line", title)
	}

	// Filter by status, then search by prompt text.
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS(`#filter-status`), "completed")); err != nil {
		t.Fatal(err)
	}
	evaluate[bool](ctx, t, `document.getElementById('filter-status').dispatchEvent(new Event('change'))`)
	err = chromedp.Do(ctx, chromedp.WaitNotPresent(chromedp.CSS(row(running))))
	if err != nil {
		t.Fatalf("status filter: %v", err)
	}
	if got := evaluate[[]string](ctx, t, rows); len(got) != 1 || got[0] != done {
		t.Errorf("completed filter lists %v, want only %s", got, done)
	}
	err = chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(`#filter-status`), ""),
		chromedp.SendKeys(chromedp.CSS(`#filter-q`), "WALRUS"),
		chromedp.Click(chromedp.CSS(`#filter-form button[type="submit"]`)),
		chromedp.WaitNotPresent(chromedp.CSS(row(done))),
		chromedp.WaitVisible(chromedp.CSS(row(running))),
	)
	if err != nil {
		t.Fatalf("search: %v", err)
	}
	if got := evaluate[[]string](ctx, t, rows); len(got) != 1 || got[0] != running {
		t.Errorf("search for walrus lists %v, want only %s", got, running)
	}

	// The running workflow's page follows the round: stopping it over the
	// API shows the new status without a reload.
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(row(running))),
		chromedp.WaitVisible(chromedp.CSS(`#live`)),
		chromedp.WaitVisible(chromedp.CSS(`.call[data-stage="stage1"]`)),
	)
	if err != nil {
		t.Fatalf("open the running workflow: %v", err)
	}
	if s := evaluate[string](ctx, t, `document.querySelector('#summary .badge').textContent`); s != "running" {
		t.Errorf("summary status = %q, want running", s)
	}
	env.must(t, http.StatusOK, "POST", "/api/v1/workflows/"+running+"/stop", adminAliceToken, nil, nil)
	err = chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`#summary .badge.stopped`)))
	if err != nil {
		t.Fatalf("the page did not update when the round was stopped: %v", err)
	}
	if live := evaluate[string](ctx, t, `document.getElementById('live').textContent`); !strings.Contains(live, "ended") {
		t.Errorf("live line = %q, want it to say the round ended", live)
	}

	// The finished workflow: attempt 2 of Stage 1 shows the feedback
	// first and the lines its prompt added; Stage 2 shows what was parsed.
	evaluate[string](ctx, t, `document.getElementById('filter-q').value = ''`)
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#filter-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(row(done))),
		chromedp.Click(chromedp.CSS(row(done))),
		chromedp.WaitVisible(chromedp.CSS(`.call[data-stage="stage1"][data-attempt="2"] .diff`)),
	)
	if err != nil {
		t.Fatalf("open the finished workflow: %v", err)
	}
	added := evaluate[string](ctx, t, `Array.from(document.querySelectorAll('.call[data-stage="stage1"][data-attempt="2"] .diff .add'))
		.map(e => e.textContent).join('')`)
	if !strings.Contains(added, "no.such.action") {
		t.Errorf("attempt 2's added lines %q do not carry the feedback about no.such.action", added)
	}
	if n := evaluate[int](ctx, t, `document.querySelectorAll('.call[data-stage="stage1"][data-attempt="2"] .diff .same').length`); n > 10 {
		t.Errorf("attempt 2 repeats %d unchanged lines, want them folded", n)
	}
	parsed := evaluate[string](ctx, t, `document.querySelector('.call[data-stage="stage2"] pre.parsed').textContent`)
	if !strings.Contains(parsed, `"fileName": "note.md"`) {
		t.Errorf("Stage 2 parsed = %q, want the parameters", parsed)
	}
}
