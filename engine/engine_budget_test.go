package engine_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twostep/twostep/budgets"
	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/webhooks"
	"github.com/twostep/twostep/workflow"
)

// TestBudgetStopsTheRound: each step makes one model call that reserves
// 204 tokens (a 400-character prompt, 100 output) and uses 150. With a
// budget of 300 tokens the third call finds it used up: it is not made, the
// round stops with stop reason budget and an assistant message saying
// why, the stop is a round.stopped webhook event, and new work is refused
// with a budget error until the budget resets.
func TestBudgetStopsTheRound(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	model := workflow.ModelFunc(func(context.Context, workflow.ModelRequest) (workflow.ModelResponse, error) {
		calls.Add(1)
		return workflow.ModelResponse{Text: "ok", Model: "m", PromptTokens: 110, CompletionTokens: 40}, nil
	})
	step := func(ctx context.Context, run workflow.Run) error {
		wf := run.Workflow()
		if _, err := run.Generate(ctx, workflow.ModelCall{Stage: workflow.StageOne, Attempt: 1, MaxTokens: 100,
			Prompt: []workflow.PromptMessage{{Role: "user", Content: strings.Repeat("x", 400)}}}); err != nil {
			return err
		}
		return run.CommitStep(ctx, workflow.StepResult{Action: "test.echo", Executed: true,
			Messages: []workflow.Message{{ID: workflow.NewID(workflow.PrefixMessage), Role: workflow.RoleAction,
				Round: wf.Round, Step: wf.Step, Action: "test.echo", Status: workflow.MessageSuccess, Text: "done"}}})
	}
	store := memstore.New()
	now := time.Now()
	lim := &budgets.Limiter{Config: budgets.Config{Default: &budgets.Limit{Tokens: 300, Period: budgets.Day}},
		Store: store, Now: func() time.Time { return now }}
	src := &webhooks.Source{Subscriptions: store, View: func(w *workflow.Workflow) any { return w.ID }}
	e := newEngine(t, engine.Config{Budget: lim, Webhooks: src}, store, model, step)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wf, err := e.Create(ctx, engine.NewWorkflow{UserID: "alice", Prompt: "p", MaxSteps: 10,
		Webhook: &workflow.WebhookSubscription{URL: "https://hooks.example/in", Secret: "whsec_eA=="}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.Wait(ctx, wf.ID)
	if err != nil || got.Status != workflow.StatusStopped || got.StopReason != workflow.StopBudget {
		t.Fatalf("round ended %+v (%v), want stopped with stop reason budget", got, err)
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("the model was called %d times, want 2 (the third finds the budget used)", n)
	}
	msgs, err := store.Messages(ctx, wf.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	last := msgs[len(msgs)-1]
	if last.Role != workflow.RoleAssistant || !strings.Contains(last.Text, "daily budget of 300 tokens") {
		t.Errorf("last message %+v, want the assistant saying the budget is spent", last)
	}
	used, _, _, _, err := lim.Usage(ctx, "alice")
	if err != nil || used.Tokens != 300 || !used.Spent {
		t.Errorf("usage = %+v (%v), want 300 tokens, spent", used, err)
	}
	ds, err := store.ClaimWebhooks(ctx, time.Now(), time.Minute, 10, 0)
	if err != nil || len(ds) != 1 || ds[0].Event != workflow.EventRoundStopped {
		t.Errorf("outbox holds %+v (%v), want one round.stopped delivery", ds, err)
	}
	var be *workflow.BudgetError
	if _, err := e.Create(ctx, engine.NewWorkflow{UserID: "alice", Prompt: "again"}); !errors.As(err, &be) {
		t.Errorf("Create with the budget spent = %v, want a budget error", err)
	}
	if _, err := e.Resume(ctx, "alice", wf.ID); !errors.As(err, &be) {
		t.Errorf("Resume with the budget spent = %v, want a budget error", err)
	}
	now = now.Add(24 * time.Hour) // the budget resets
	if _, err := e.Resume(ctx, "alice", wf.ID); err != nil {
		t.Errorf("Resume the next day: %v", err)
	}
}

// TestSmallBudgetMakesCalls (issue 45 item 2): calls that set no
// maxTokens used to reserve their prompt plus 4096 output tokens, so a
// budget of 2500 tokens stopped the first round before any call and read
// spent with nothing used. Now each call goes while the budget has room
// (the last one crosses it) and reserves what its stage's replies write.
func TestSmallBudgetMakesCalls(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	model := workflow.ModelFunc(func(context.Context, workflow.ModelRequest) (workflow.ModelResponse, error) {
		calls.Add(1)
		return workflow.ModelResponse{Text: "ok", Model: "m", PromptTokens: 900, CompletionTokens: 200}, nil
	})
	step := func(ctx context.Context, run workflow.Run) error {
		wf := run.Workflow()
		if _, err := run.Generate(ctx, workflow.ModelCall{Stage: workflow.StageOne, Attempt: 1,
			Prompt: []workflow.PromptMessage{{Role: "user", Content: strings.Repeat("x", 3600)}}}); err != nil {
			return err
		}
		return run.CommitStep(ctx, workflow.StepResult{Action: "test.echo", Executed: true,
			Messages: []workflow.Message{{ID: workflow.NewID(workflow.PrefixMessage), Role: workflow.RoleAction,
				Round: wf.Round, Step: wf.Step, Action: "test.echo", Status: workflow.MessageSuccess, Text: "done"}}})
	}
	store := memstore.New()
	lim := &budgets.Limiter{Config: budgets.Config{Default: &budgets.Limit{Tokens: 2500, Period: budgets.Day}}, Store: store}
	e := newEngine(t, engine.Config{Budget: lim}, store, model, step)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wf, err := e.Create(ctx, engine.NewWorkflow{UserID: "alice", Prompt: "p", MaxSteps: 10})
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.Wait(ctx, wf.ID)
	if err != nil || got.StopReason != workflow.StopBudget {
		t.Fatalf("round ended %s/%s (%v), want stopped for the budget", got.Status, got.StopReason, err)
	}
	if n := calls.Load(); n != 3 {
		t.Errorf("the model was called %d times, want 3 (1100 tokens each; the third crosses 2500)", n)
	}
	used, _, _, _, err := lim.Usage(ctx, "alice")
	if err != nil || used.Tokens != 3300 || !used.Spent {
		t.Errorf("usage = %+v (%v), want 3300 tokens, spent", used, err)
	}
}

// TestBudgetStopKeepsQueuedRounds: rounds queued behind a round that stops
// for the budget stay queued (not started, each to be refused and
// stopped in turn); resumed after the reset, the round ends and the first
// queued round starts, and its own budget stop keeps the rest queued.
func TestBudgetStopKeepsQueuedRounds(t *testing.T) {
	t.Parallel()
	started, release := make(chan struct{}, 16), make(chan struct{})
	var calls atomic.Int32
	model := workflow.ModelFunc(func(context.Context, workflow.ModelRequest) (workflow.ModelResponse, error) {
		if calls.Add(1) == 1 {
			started <- struct{}{}
			<-release
		}
		return workflow.ModelResponse{Text: "ok", Model: "m", PromptTokens: 110, CompletionTokens: 40}, nil
	})
	// Each step makes one call reserving 204 tokens and using 150; the
	// third step ends the round: a 300-token budget holds two calls a day.
	step := func(ctx context.Context, run workflow.Run) error {
		wf := run.Workflow()
		if _, err := run.Generate(ctx, workflow.ModelCall{Stage: workflow.StageOne, Attempt: 1, MaxTokens: 100,
			Prompt: []workflow.PromptMessage{{Role: "user", Content: strings.Repeat("x", 400)}}}); err != nil {
			return err
		}
		res := workflow.StepResult{Action: "test.echo", Executed: true,
			Messages: []workflow.Message{{ID: workflow.NewID(workflow.PrefixMessage), Role: workflow.RoleAction,
				Round: wf.Round, Step: wf.Step, Action: "test.echo", Status: workflow.MessageSuccess, Text: "done"}}}
		if wf.Step >= 3 {
			res.End = &workflow.RoundEnd{Status: workflow.StatusCompleted, Reason: workflow.StopCompleted}
		}
		return run.CommitStep(ctx, res)
	}
	store := memstore.New()
	now := time.Now()
	var clock sync.Mutex
	lim := &budgets.Limiter{Config: budgets.Config{Default: &budgets.Limit{Tokens: 300, Period: budgets.Day}},
		Store: store, Now: func() time.Time { clock.Lock(); defer clock.Unlock(); return now }}
	e := newEngine(t, engine.Config{Budget: lim}, store, model, step)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wf, err := e.Create(ctx, engine.NewWorkflow{UserID: "alice", Prompt: "p", MaxSteps: 10})
	if err != nil {
		t.Fatal(err)
	}
	<-started
	for _, p := range []string{"q1", "q2"} {
		if _, err := e.StartRound(ctx, "alice", wf.ID, engine.NewRound{Prompt: p, OnBusy: workflow.OnBusyEnqueue}); err != nil {
			t.Fatal(err)
		}
	}
	close(release)
	queued := func(w *workflow.Workflow) []string {
		var out []string
		for _, q := range w.QueuedRounds {
			out = append(out, q.Prompt)
		}
		return out
	}
	got, err := e.Wait(ctx, wf.ID)
	if err != nil || got.StopReason != workflow.StopBudget || got.Round != 1 || !slices.Equal(queued(got), []string{"q1", "q2"}) {
		t.Fatalf("after the budget stop: round %d %s/%s queue %q (%v); want round 1 stopped for the budget, q1 and q2 queued",
			got.Round, got.Status, got.StopReason, queued(got), err)
	}
	clock.Lock()
	now = now.Add(24 * time.Hour) // the budget resets
	clock.Unlock()
	if _, err := e.Resume(ctx, "alice", wf.ID); err != nil {
		t.Fatal(err)
	}
	got, err = e.Wait(ctx, wf.ID)
	if err != nil || got.StopReason != workflow.StopBudget || got.Round != 2 || !slices.Equal(queued(got), []string{"q2"}) {
		t.Errorf("after resuming: round %d %s/%s queue %q (%v); want round 2 (q1) stopped for the budget, q2 queued",
			got.Round, got.Status, got.StopReason, queued(got), err)
	}
}

// TestActionModelCallsCountAndAreRefused (issue 45 item 4): a model call
// an action makes (ai.process) asks the run's guard first: it is counted
// in the user's budget, and refused once the budget is spent, which stops
// the round for the budget instead of running the action.
func TestActionModelCallsCountAndAreRefused(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	model := workflow.ModelFunc(func(context.Context, workflow.ModelRequest) (workflow.ModelResponse, error) {
		calls.Add(1)
		return workflow.ModelResponse{Text: "ok", Model: "m", PromptTokens: 110, CompletionTokens: 40}, nil
	})
	// Each step is an action that calls the model, as ai.process does.
	step := func(ctx context.Context, run workflow.Run) error {
		wf := run.Workflow()
		req := workflow.ModelRequest{Stage: workflow.StageAction, MaxTokens: 100,
			Messages: []workflow.PromptMessage{{Role: "user", Content: strings.Repeat("x", 400)}}}
		done, err := workflow.GuardModelCall(ctx, req)
		if err != nil {
			return err
		}
		resp, err := model.Generate(ctx, req)
		done(resp)
		if err != nil {
			return err
		}
		return run.CommitStep(ctx, workflow.StepResult{Action: "ai.process", Executed: true,
			Messages: []workflow.Message{{ID: workflow.NewID(workflow.PrefixMessage), Role: workflow.RoleAction,
				Round: wf.Round, Step: wf.Step, Action: "ai.process", Status: workflow.MessageSuccess, Text: "done"}}})
	}
	store := memstore.New()
	lim := &budgets.Limiter{Config: budgets.Config{Default: &budgets.Limit{Tokens: 300, Period: budgets.Day}}, Store: store}
	e := newEngine(t, engine.Config{Budget: lim}, store, model, step)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wf, err := e.Create(ctx, engine.NewWorkflow{UserID: "alice", Prompt: "p", MaxSteps: 10})
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.Wait(ctx, wf.ID)
	if err != nil || got.StopReason != workflow.StopBudget {
		t.Fatalf("round ended %s/%s (%v), want stopped for the budget", got.Status, got.StopReason, err)
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("the action called the model %d times, want 2 (the third finds the budget used)", n)
	}
	used, _, _, _, err := lim.Usage(ctx, "alice")
	if err != nil || used.Tokens != 300 || used.Reserved != 0 {
		t.Errorf("usage = %+v (%v), want the actions' 300 tokens, nothing left reserved", used, err)
	}
}
