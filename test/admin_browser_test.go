package test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/twostep/twostep/adminv1"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/workflow"
)

// chromiumPath finds Debian's chromium. Without it the browser test skips,
// except under CI (CI set, the one switch that makes every skipped
// dependency a failure), where it fails.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "/usr/bin/chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is not installed but CI is set: apt-get install -y chromium")
	}
	t.Skip("chromium is not installed (apt-get install -y chromium); under CI this is a failure")
	return ""
}

// browser starts a fresh headless Chromium for the test and returns a tab
// context bounded by timeout.
func browser(t *testing.T, timeout time.Duration) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	t.Cleanup(func() {
		cancelTimeout()
		cancelTab()
		cancelAlloc() // waits for the browser process to exit
	})
	return ctx
}

// TestAdminPageInBrowser loads the viewer in a real Chromium, enters the
// token, opens a workflow and reads its Stage 2 prompt; hostile text in
// the prompt and the replies stays text, and the rejected Stage 1 attempt
// is highlighted with its feedback.
func TestAdminPageInBrowser(t *testing.T) {
	ctx := browser(t, 90*time.Second)
	env := newAdminEnv(t)
	hostile := `<img src=x id=pwn onerror="window.__pwned=1"> & <script>window.__pwned=2</script>`
	env.script.push(workflow.StageOne,
		`{"action": "no.such.action", "actionObjective": "`+strings.ReplaceAll(hostile, `"`, `\"`)+`"}`,
		generate("write it <b>bold</b>"), enginetest.Completes("done")[0])
	env.script.push(workflow.StageTwo, generateParams("x.md", "# X"), enginetest.Completes("done")[1])
	id := env.create(t, "Write a note: "+hostile)
	if wf := env.wait(t, id); wf.Status != workflow.StatusCompleted {
		t.Fatalf("status %s (%s)", wf.Status, wf.Error)
	}
	var stage2 []adminv1.TraceView
	for _, tr := range env.traces(t, id, 6) {
		if tr.Stage == string(workflow.StageTwo) {
			stage2 = append(stage2, tr)
		}
	}
	contents := func(p []adminv1.PromptMessage) []string {
		var out []string
		for _, m := range p {
			out = append(out, m.Content)
		}
		return out
	}
	wantPrompt := contents(stage2[0].Prompt)
	// "x.md" appears in neither Stage 2's objective nor its context
	// ("# X" is too short to judge): the view lists the field.
	if diff := cmp.Diff([]string{"fileName"}, stage2[0].Ungrounded); diff != "" {
		t.Errorf("Stage 2 trace view's ungrounded (-want +got):\n%s", diff)
	}

	row := chromedp.CSS(`#workflows li[data-id="` + id + `"]`)
	err := chromedp.Do(ctx,
		chromedp.Navigate(env.url+"/admin/"),
		chromedp.WaitVisible(chromedp.CSS(`#token`)),
		chromedp.SendKeys(chromedp.CSS(`#token`), adminRootToken),
		chromedp.Click(chromedp.CSS(`#save-token`)),
		chromedp.WaitVisible(row),
		chromedp.Click(row),
		chromedp.WaitVisible(chromedp.CSS(`.call[data-stage="stage2"] pre.prompt-text`)),
		chromedp.WaitReady(chromedp.CSS(`#actions li`)), // in the closed Actions panel
		chromedp.WaitVisible(chromedp.CSS(`#economy svg.economy-chart`)),
	)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	// The economy chart: one point per step of the report in each series,
	// its summary naming the route's figures.
	var eco adminv1.EconomyView
	env.must(t, 200, "GET", "/admin/v1/workflows/"+id+"/economy", adminRootToken, nil, &eco)
	points := evaluate[map[string]int](ctx, t, `Object.fromEntries(['stage1', 'stage2', 'cached', 'output'].map(k =>
		[k, document.querySelectorAll('#economy svg .series-' + k + ' circle').length]))`)
	if want := len(eco.Steps); want == 0 || points["stage1"] != want || points["stage2"] != want || points["cached"] != want || points["output"] != want {
		t.Errorf("chart points %v, want %d per series", points, want)
	}
	// Stage 1 is drawn last and dashed, so it shows where it equals Stage 2.
	if top := evaluate[string](ctx, t, `(() => { const g = [...document.querySelectorAll('#economy svg g.series')].pop();
		return g.getAttribute('class') + ' ' + getComputedStyle(g.querySelector('polyline')).strokeDasharray; })()`); top == "" ||
		!strings.HasPrefix(top, "series series-stage1 ") || strings.HasSuffix(top, " none") {
		t.Errorf("the chart's top series is %q, want Stage 1, dashed", top)
	}
	summary := evaluate[string](ctx, t, `document.querySelector('#economy .economy-summary').textContent`)
	if want := fmt.Sprintf("cost ratio %.2f", eco.CostRatio); !strings.Contains(summary, want) ||
		!strings.Contains(summary, fmt.Sprintf("loop %d in / %d cached", eco.PlainLoop.Input, eco.PlainLoop.Cached)) {
		t.Errorf("economy summary %q, want the plain loop's %d in / %d cached and %q", summary, eco.PlainLoop.Input, eco.PlainLoop.Cached, want)
	}
	if by := evaluate[string](ctx, t, `document.querySelector('.by-stage').textContent`); !strings.Contains(by, "stage1 3 calls") {
		t.Errorf("by-stage line %q, want stage1's 3 calls", by)
	}
	gotPrompt := evaluate[[]string](ctx, t, `Array.from(document.querySelector('.call[data-stage="stage2"]')
		.querySelectorAll('.prompt pre.prompt-text')).map(e => e.textContent)`)
	stored := evaluate[string](ctx, t, `sessionStorage.getItem('twostep.adminToken')`)
	images := evaluate[int](ctx, t, `document.querySelectorAll('img, #timeline script').length`)
	pwned := evaluate[bool](ctx, t, `window.__pwned !== undefined`)
	ungrounded := evaluate[string](ctx, t, `document.querySelector('.call[data-stage="stage2"] .ungrounded').textContent`)
	rejected := evaluate[int](ctx, t, `document.querySelectorAll('.call.rejected[data-stage="stage1"] .feedback').length`)
	feedback := evaluate[string](ctx, t, `document.querySelector('.call.rejected .feedback').textContent`)
	userText := evaluate[string](ctx, t, `document.querySelector('.message.user pre').textContent`)
	mcpTool := evaluate[string](ctx, t, `Array.from(document.querySelectorAll('#actions li')).map(e => e.textContent).find(s => s.startsWith('mcp.')) || ''`)
	if !strings.Contains(mcpTool, "mcp.files.read") || !strings.Contains(mcpTool, "MCP files") || !strings.Contains(mcpTool, "<img src=x") {
		t.Errorf("the actions panel shows the MCP tool as %q, want its name, server and description as text", mcpTool)
	}
	operation := evaluate[string](ctx, t, `Array.from(document.querySelectorAll('#actions li')).map(e => e.textContent).find(s => s.startsWith('tickets.')) || ''`)
	if !strings.Contains(operation, "OpenAPI tickets") || !strings.Contains(operation, "GET /tickets/{ticketId}") {
		t.Errorf("the actions panel shows the OpenAPI operation as %q, want its source, method and path", operation)
	}
	// The call's meta line names its output mode (the scripted model's calls are text).
	meta := evaluate[string](ctx, t, `document.querySelector('.call[data-stage="stage2"] .meta').textContent`)
	if !strings.Contains(meta, " · template stage2 · output text") {
		t.Errorf("stage 2 meta %q lacks the output mode", meta)
	}
	// Render stage 2 (the last step's, as recorded) and replay the first
	// Stage 1 call with a scripted answer.
	env.script.push(workflow.StageOne, generate("replayed <i>now</i>"))
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#render-stage2`)),
		chromedp.WaitVisible(chromedp.CSS(`#render-out .render pre.prompt-text`)),
		chromedp.Click(chromedp.CSS(`.call[data-stage="stage1"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`.call[data-stage="stage1"] .replay-out pre.reply-text`)),
	)
	if err != nil {
		t.Fatalf("browser render/replay: %v", err)
	}
	rendered := evaluate[[]string](ctx, t, `Array.from(document.querySelectorAll('#render-out .render .prompt pre.prompt-text')).map(e => e.textContent)`)
	if diff := cmp.Diff(contents(stage2[len(stage2)-1].Prompt), rendered); diff != "" {
		t.Errorf("rendered stage 2 on the page (-trace +page):\n%s", diff)
	}
	replayed := evaluate[string](ctx, t, `document.querySelector('.call[data-stage="stage1"] .replay-out pre.reply-text').textContent`)
	if !strings.Contains(replayed, `replayed \u003ci\u003enow\u003c/i\u003e`) {
		t.Errorf("replay shown as %q", replayed)
	}
	if n := evaluate[int](ctx, t, `document.querySelectorAll('i, img').length`); n != 0 {
		t.Errorf("replayed text became markup: %d elements", n)
	}

	if dir := os.Getenv("TWOSTEP_ADMIN_SCREENSHOT_DIR"); dir != "" { // for a person checking the layout
		err := chromedp.Do(ctx, chromedp.EmulateViewport(1400, 1100))
		var shot []byte
		if err == nil {
			shot, err = chromedp.Run(ctx, chromedp.CaptureScreenshot())
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, "admin.png"), shot, 0o644)
		}
		var chart []byte
		if err == nil {
			chart, err = chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(`#economy`)))
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, "economy.png"), chart, 0o644)
		}
		if err != nil {
			t.Errorf("screenshot: %v", err)
		}
	}
	if strings.Join(gotPrompt, "\x00") != strings.Join(wantPrompt, "\x00") {
		t.Errorf("Stage 2 prompt on the page:\n%q\nwant the trace's:\n%q", gotPrompt, wantPrompt)
	}
	if stored != adminRootToken {
		t.Errorf("sessionStorage token = %q", stored)
	}
	if images != 0 || pwned {
		t.Errorf("hostile text became markup: %d img/script elements, script ran: %v", images, pwned)
	}
	if rejected != 1 || !strings.Contains(feedback, "no.such.action") {
		t.Errorf("%d highlighted rejections, feedback %q", rejected, feedback)
	}
	if !strings.HasPrefix(ungrounded, "Ungrounded: fileName —") {
		t.Errorf("Stage 2 call shows %q, want its ungrounded field", ungrounded)
	}
	if !strings.Contains(userText, hostile) {
		t.Errorf("user prompt shown as %q, want the literal text", userText)
	}
}

// evaluate runs a script in the page and returns its result.
func evaluate[T any](ctx context.Context, t *testing.T, script string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](script))
	if err != nil {
		t.Fatalf("evaluating %s: %v", script, err)
	}
	return v
}
