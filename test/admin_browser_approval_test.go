package test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/twostep/twostep/workflow"
)

// TestAdminPageShowsPendingApprovals: the status filter lists the rounds
// waiting for a decision, and a paused workflow shows what its owner is
// asked to approve — the action, its effect and connection, the exact
// parameters — in the summary and at its step in the timeline.
func TestAdminPageShowsPendingApprovals(t *testing.T) {
	ctx := browser(t, 60*time.Second)
	env := newAdminEnv(t)
	// Now, not a fixed date: the engine rejects an approval past its
	// expiresAt, and a fixed date's approval expired a day later, taking
	// the paused workflow out of the awaiting_approval list.
	at := time.Now().UTC().Truncate(time.Second)
	commit := func(wf *workflow.Workflow) {
		t.Helper()
		if _, _, err := env.raw.Commit(context.Background(), workflow.Commit{Workflow: wf}); err != nil {
			t.Fatal(err)
		}
	}
	paused := &workflow.Workflow{
		ID: workflow.NewID(workflow.PrefixWorkflow), UserID: "alice", Mode: workflow.ModeReact, Title: "Open the CRM account",
		Status: workflow.StatusAwaitingApproval, Round: 1, Step: 2, MaxSteps: 5, CreatedAt: at, UpdatedAt: at,
		Checkpoint: &workflow.Checkpoint{Phase: workflow.PhaseExecute},
		PendingApproval: &workflow.PendingApproval{
			ID: workflow.NewID(workflow.PrefixApproval), Round: 1, Step: 2, Action: "http.request",
			ActionObjective: "create the account for ACME", Parameters: map[string]any{"method": "POST", "path": "/accounts", "body": "ACME-7731"},
			Documents: []string{}, Connection: "crm", Effect: workflow.EffectWrite,
			RequestedAt: at, ExpiresAt: at.Add(24 * time.Hour),
		},
	}
	done := &workflow.Workflow{
		ID: workflow.NewID(workflow.PrefixWorkflow), UserID: "alice", Mode: workflow.ModeReact, Title: "Something finished",
		Status: workflow.StatusCompleted, StopReason: workflow.StopCompleted, Round: 1, Step: 1, MaxSteps: 5,
		CreatedAt: at.Add(time.Minute), UpdatedAt: at.Add(time.Minute),
	}
	commit(paused)
	commit(done)
	row := func(id string) string { return `#workflows li[data-id="` + id + `"]` }

	err := chromedp.Do(ctx,
		chromedp.Navigate(env.url+"/admin/"),
		chromedp.WaitVisible(chromedp.CSS(`#token`)),
		chromedp.SendKeys(chromedp.CSS(`#token`), adminRootToken),
		chromedp.Click(chromedp.CSS(`#save-token`)),
		chromedp.WaitVisible(chromedp.CSS(row(done.ID))),
		chromedp.SetValue(chromedp.CSS(`#filter-status`), "awaiting_approval"),
	)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	evaluate[bool](ctx, t, `document.getElementById('filter-status').dispatchEvent(new Event('change'))`)
	// The list empties before the filtered page arrives, and is redrawn
	// as the page polls: read it from the page's script until it shows
	// the filtered page (chromedp's waits hold on to nodes a redraw
	// replaces).
	var rows []string
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		rows = evaluate[[]string](ctx, t, `Array.from(document.querySelectorAll('#workflows li')).map(li => li.dataset.id)`)
		if len(rows) > 0 && !slices.Contains(rows, done.ID) {
			break
		}
	}
	if len(rows) != 1 || rows[0] != paused.ID {
		t.Fatalf("awaiting_approval lists %v, want only %s", rows, paused.ID)
	}
	// Clicked from the page's script: the list may be redrawn between a
	// node lookup and a protocol-level click.
	evaluate[bool](ctx, t, `(document.querySelector('`+row(paused.ID)+`').click(), true)`)
	err = chromedp.Do(ctx,
		chromedp.WaitVisible(chromedp.CSS(`#summary .approval`)),
		chromedp.WaitVisible(chromedp.CSS(`#timeline .step[data-step="2"] .timeline-approval`)),
	)
	if err != nil {
		t.Fatalf("open the paused workflow: %v", err)
	}
	summary := evaluate[string](ctx, t, `document.querySelector('#summary .approval').textContent`)
	if kind := evaluate[string](ctx, t, `document.querySelector('#summary .approval .approval-kind').textContent`); kind != "call" {
		t.Errorf("the summary's approval kind = %q, want call", kind)
	}
	for _, want := range []string{"awaiting approval", "http.request", "(write)", "connection crm",
		"create the account for ACME", `"method": "POST"`, "ACME-7731", paused.PendingApproval.ID} {
		if !strings.Contains(summary, want) {
			t.Errorf("the summary's approval lacks %q:\n%s", want, summary)
		}
	}
	step := evaluate[string](ctx, t, `document.querySelector('#timeline .step[data-step="2"] .timeline-approval').textContent`)
	if !strings.Contains(step, "http.request") || !strings.Contains(step, "awaiting approval") {
		t.Errorf("step 2 of the timeline shows %q, want the held http.request", step)
	}
}

// TestAdminPageShowsIntentApproval: a workflow paused for an intent shows
// its kind, the fields Stage 2 will fill and the context it will be given
// (no parameters), and an earlier call a standing approval let run says
// which one and who granted it.
func TestAdminPageShowsIntentApproval(t *testing.T) {
	ctx := browser(t, 60*time.Second)
	env := newAdminEnv(t)
	at := time.Now().UTC().Truncate(time.Second)
	paused := &workflow.Workflow{
		ID: workflow.NewID(workflow.PrefixWorkflow), UserID: "alice", Mode: workflow.ModeReact, Title: "Open tickets",
		Status: workflow.StatusAwaitingApproval, Round: 1, Step: 2, MaxSteps: 5, CreatedAt: at, UpdatedAt: at,
		Checkpoint: &workflow.Checkpoint{Phase: workflow.PhaseParameterize},
		PendingApproval: &workflow.PendingApproval{
			ID: workflow.NewID(workflow.PrefixApproval), Round: 1, Step: 2, Action: "tickets.create", Kind: workflow.ApprovalIntent,
			ActionObjective: "open a ticket for the outage", ParametersContext: "the EU outage since 09:12",
			Fields:    []workflow.FieldSpec{{Name: "title", Type: "string", Required: true}, {Name: "priority", Type: "number", Required: true}},
			Documents: []string{}, Effect: workflow.EffectWrite, RequestedAt: at, ExpiresAt: at.Add(24 * time.Hour),
		},
	}
	admitted := workflow.Message{ID: workflow.NewID(workflow.PrefixMessage), WorkflowID: paused.ID, Round: 1, Step: 1,
		Role: workflow.RoleAction, Text: "ticket created", Action: "tickets.create", Status: workflow.MessageSuccess,
		Parameters: map[string]any{"title": "first", "priority": 1}, Documents: []workflow.Document{}, CreatedAt: at,
		ApprovedBy: &workflow.ApprovedBy{StandingApprovalID: "sap_0123", GrantedBy: "alice"}}
	if _, _, err := env.raw.Commit(context.Background(), workflow.Commit{Workflow: paused, Messages: []workflow.Message{admitted}}); err != nil {
		t.Fatal(err)
	}
	err := chromedp.Do(ctx,
		chromedp.Navigate(env.url+"/admin/"),
		chromedp.WaitVisible(chromedp.CSS(`#token`)),
		chromedp.SendKeys(chromedp.CSS(`#token`), adminRootToken),
		chromedp.Click(chromedp.CSS(`#save-token`)),
		chromedp.WaitVisible(chromedp.CSS(`#workflows li[data-id="`+paused.ID+`"]`)),
	)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	evaluate[bool](ctx, t, `(document.querySelector('#workflows li[data-id="`+paused.ID+`"]').click(), true)`)
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`#summary .approval`)), chromedp.WaitVisible(chromedp.CSS(`#timeline .approved-by`))); err != nil {
		t.Fatalf("open the paused workflow: %v", err)
	}
	if kind := evaluate[string](ctx, t, `document.querySelector('#summary .approval .approval-kind').textContent`); kind != "intent" {
		t.Errorf("the summary's approval kind = %q, want intent", kind)
	}
	summary := evaluate[string](ctx, t, `document.querySelector('#summary .approval').textContent`)
	for _, want := range []string{"tickets.create", "open a ticket for the outage", "Stage 2 will fill: title (string), priority (number)", "the EU outage since 09:12"} {
		if !strings.Contains(summary, want) {
			t.Errorf("the summary's approval lacks %q:\n%s", want, summary)
		}
	}
	if evaluate[bool](ctx, t, `!!document.querySelector('#summary .approval-params')`) {
		t.Errorf("an intent approval shows parameters")
	}
	if by := evaluate[string](ctx, t, `document.querySelector('#timeline .approved-by').textContent`); by != "approved by standing approval sap_0123, granted by alice" {
		t.Errorf("the admitted call shows %q", by)
	}
}
