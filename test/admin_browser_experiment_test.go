package test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/workflow"
)

// TestAdminPageShowsAnExperiment: #/experiments/<id> shows one row per
// re-run call with its agreement, the recorded and the new value of each
// parameter that changed marked, and a rejected reply's error; the new
// values (model output) stay text.
func TestAdminPageShowsAnExperiment(t *testing.T) {
	ctx := browser(t, 60*time.Second)
	env := newAdminEnv(t)
	env.script.push(workflow.StageOne, generate("write it"), enginetest.Completes("done")[0])
	env.script.push(workflow.StageTwo, generateParams("x.md", "# X"), enginetest.Completes("done")[1])
	id := env.create(t, "Write a note")
	if wf := env.wait(t, id); wf.Status != workflow.StatusCompleted {
		t.Fatalf("status %s (%s)", wf.Status, wf.Error)
	}
	hostile := `y.md<img src=x onerror="window.__pwned=1">`
	// Both re-run calls get this reply: the note's file name changes, and
	// the answer step rejects parameters it does not have.
	env.script.push(workflow.StageTwo, generateParams(hostile, "# X"), generateParams(hostile, "# X"))
	var started struct{ ID string }
	env.must(t, 202, "POST", "/admin/v1/experiments", adminRootToken, map[string]any{"stage": "stage2", "workflows": []string{id}}, &started)

	err := chromedp.Do(ctx,
		chromedp.Navigate(env.url+"/admin/"),
		chromedp.WaitVisible(chromedp.CSS(`#token`)),
		chromedp.SendKeys(chromedp.CSS(`#token`), adminRootToken),
		chromedp.Click(chromedp.CSS(`#save-token`)),
		chromedp.Navigate(env.url+"/admin/#/experiments/"+started.ID),
		chromedp.WaitVisible(chromedp.CSS(`#experiment-table tr.disagrees`)),
		chromedp.WaitNotVisible(chromedp.CSS(`#experiment-stop`)), // completed
	)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	rows := evaluate[[]string](ctx, t, `[...document.querySelectorAll('#experiment-table tr.disagrees')].map(r => r.textContent)`)
	if len(rows) != 2 {
		t.Fatalf("rows %q, want the two calls, both disagreeing", rows)
	}
	changed := evaluate[[]string](ctx, t, `[...document.querySelectorAll('#experiment-table .diff .del, #experiment-table .diff .add')].map(e => e.textContent)`)
	if len(changed) < 2 || changed[0] != `"x.md"` || !strings.Contains(changed[1], `y.md<img`) {
		t.Errorf("marked values %q, want the recorded and the new file name", changed)
	}
	if !strings.Contains(strings.Join(rows, "\n"), "rejected") {
		t.Errorf("the answer step's rejection is not shown:\n%s", strings.Join(rows, "\n"))
	}
	if summary := evaluate[string](ctx, t, `document.querySelector('#experiment-summary').textContent`); !strings.Contains(summary, "0 of 2 calls agree") ||
		!strings.Contains(summary, "completed") {
		t.Errorf("summary %q", summary)
	}
	if evaluate[bool](ctx, t, `window.__pwned !== undefined || document.querySelector('#experiment img') !== null`) {
		t.Error("model output in the experiment table ran as HTML")
	}
}
