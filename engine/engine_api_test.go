package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/workflow"
)

// stubMode is a hand-written Mode: Step runs stepFunc.
type stubMode struct {
	stepFunc func(ctx context.Context, run workflow.Run) error
}

func (m stubMode) Step(ctx context.Context, run workflow.Run) error { return m.stepFunc(ctx, run) }
func (m stubMode) Closing(run workflow.Run) workflow.Message {
	return workflow.Message{Text: "closing"}
}

// callThenComplete makes one model call per step and completes the round.
func callThenComplete(ctx context.Context, run workflow.Run) error {
	if _, err := run.Generate(ctx, workflow.ModelCall{Stage: workflow.StageOne, Attempt: 1}); err != nil {
		return err
	}
	return run.CommitStep(ctx, workflow.StepResult{
		Messages: []workflow.Message{{ID: workflow.NewID(workflow.PrefixMessage), Role: workflow.RoleAssistant, Text: "done"}},
		End:      &workflow.RoundEnd{Status: workflow.StatusCompleted, Reason: workflow.StopCompleted},
	})
}

// blocking answers every call only when its context is cancelled.
var blocking = workflow.ModelFunc(func(ctx context.Context, _ workflow.ModelRequest) (workflow.ModelResponse, error) {
	<-ctx.Done()
	return workflow.ModelResponse{}, ctx.Err()
})

func newEngine(t testing.TB, cfg engine.Config, store workflow.Store, model workflow.Model, step func(context.Context, workflow.Run) error) *enginetest.Engine {
	t.Helper()
	cfg.PollInterval, cfg.RecoverInterval, cfg.LeaseTTL = 10*time.Millisecond, 50*time.Millisecond, time.Second
	if cfg.ShutdownGrace == 0 { // the cleanup's Shutdown cuts a blocking model call at once
		cfg.ShutdownGrace = 50 * time.Millisecond
	}
	e, err := enginetest.NewEngine(cfg, store, model, enginetest.NewRegistry(),
		map[workflow.ModeName]workflow.Mode{workflow.ModeReact: stubMode{step}})
	if err != nil {
		t.Fatal(err)
	}
	e.Start(context.Background())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := e.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return e
}

// createAndWait creates a workflow of alice with prompt "p" on e and waits
// (5 s at most) until its round no longer runs.
func createAndWait(t testing.TB, e *enginetest.Engine) (created, ended *workflow.Workflow) {
	t.Helper()
	created, err := e.Create(context.Background(), engine.NewWorkflow{UserID: "alice", Prompt: "p"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ended, err = e.Wait(ctx, created.ID)
	if err != nil {
		t.Fatal(err)
	}
	return created, ended
}

func TestNewEngineValidates(t *testing.T) {
	t.Parallel()
	modes := map[workflow.ModeName]workflow.Mode{workflow.ModeReact: stubMode{callThenComplete}}
	store, reg := memstore.New(), enginetest.NewRegistry()
	tests := []struct {
		name  string
		cfg   engine.Config
		store workflow.Store
		modes map[workflow.ModeName]workflow.Mode
	}{
		{"no store", engine.Config{}, nil, modes},
		{"no mode", engine.Config{}, store, nil},
		{"default above limit", engine.Config{DefaultMaxSteps: 20, MaxStepsLimit: 10}, store, modes},
		{"negative workers", engine.Config{Workers: -1}, store, modes},
		// The watcher renews every LeaseTTL/3: a zero interval would panic
		// its ticker and take the process down with the first round.
		{"lease under a millisecond", engine.Config{LeaseTTL: 2 * time.Nanosecond}, store, modes},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := engine.New(tc.cfg, tc.store, blocking, reg, tc.modes)
			if workflow.KindOf(err) != workflow.KindInvalid {
				t.Errorf("engine.New: %v, want KindInvalid", err)
			}
		})
	}
}

func TestCreateValidates(t *testing.T) {
	t.Parallel()
	e := newEngine(t, engine.Config{}, memstore.New(), blocking, callThenComplete)
	doc := func(name string) []workflow.DocumentContent {
		return []workflow.DocumentContent{{Document: workflow.Document{Name: name}, Content: []byte("x")}}
	}
	tests := []struct {
		name string
		in   engine.NewWorkflow
	}{
		{"no user", engine.NewWorkflow{Prompt: "p"}},
		{"empty prompt", engine.NewWorkflow{UserID: "alice", Prompt: "  \n"}},
		{"unknown mode", engine.NewWorkflow{UserID: "alice", Prompt: "p", Mode: "chain"}},
		{"mode not served", engine.NewWorkflow{UserID: "alice", Prompt: "p", Mode: workflow.ModeActionPlan}},
		{"maxSteps above limit", engine.NewWorkflow{UserID: "alice", Prompt: "p", MaxSteps: 101}},
		{"negative maxSteps", engine.NewWorkflow{UserID: "alice", Prompt: "p", MaxSteps: -1}},
		{"nameless document", engine.NewWorkflow{UserID: "alice", Prompt: "p", Documents: doc(" ")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := e.Create(context.Background(), tc.in); workflow.KindOf(err) != workflow.KindInvalid {
				t.Errorf("Create: %v, want KindInvalid", err)
			}
		})
	}
}

func TestCreateCommitsTheFirstRound(t *testing.T) {
	t.Parallel()
	store := memstore.New()
	e := newEngine(t, engine.Config{}, store, blocking, callThenComplete)
	wf, err := e.Create(context.Background(), engine.NewWorkflow{UserID: "alice", Prompt: "hello\nmore detail", Documents: []workflow.DocumentContent{
		{Document: workflow.Document{Name: "a.csv", MimeType: "text/csv"}, Content: []byte("a,b\n")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if wf.Status != workflow.StatusRunning || wf.Round != 1 || wf.Step != 1 || wf.MaxSteps != engine.DefaultMaxSteps || wf.Mode != workflow.ModeReact ||
		wf.Title != "hello" {
		t.Errorf("created %+v, want running round 1 step 1 with the defaults", wf)
	}
	msgs, _ := store.Messages(context.Background(), wf.ID, 0, 0)
	if len(msgs) != 1 || msgs[0].Role != workflow.RoleUser || msgs[0].Text != "hello\nmore detail" || msgs[0].DocumentsLabel != "round1_user_context" || len(msgs[0].Documents) != 1 {
		t.Fatalf("messages = %+v, want the user message with its upload", msgs)
	}
	d := msgs[0].Documents[0]
	content, err := store.DocumentContent(context.Background(), wf.ID, d.ID)
	if err != nil || string(content.Content) != "a,b\n" || d.Size != 4 || d.MessageID != msgs[0].ID {
		t.Errorf("document %+v content %q (%v), want the upload", d, content.Content, err)
	}
}

func TestConflictsAndOwnership(t *testing.T) {
	t.Parallel()
	store := memstore.New()
	e := newEngine(t, engine.Config{}, store, blocking, callThenComplete)
	ctx := context.Background()
	wf, err := e.Create(ctx, engine.NewWorkflow{UserID: "alice", Prompt: "p"})
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name string
		call func() error
		want workflow.Kind
	}{
		{"round while running", func() error {
			_, err := e.StartRound(ctx, "alice", wf.ID, engine.NewRound{Prompt: "again"})
			return err
		}, workflow.KindConflict},
		{"resume while running", func() error { _, err := e.Resume(ctx, "alice", wf.ID); return err }, workflow.KindConflict},
		{"another user's get", func() error { _, err := e.Get(ctx, "bob", wf.ID); return err }, workflow.KindNotFound},
		{"another user's stop", func() error { _, err := e.Stop(ctx, "bob", wf.ID); return err }, workflow.KindNotFound},
		{"another user's delete", func() error { return e.Delete(ctx, "bob", wf.ID) }, workflow.KindNotFound},
		{"malformed id", func() error { _, err := e.Get(ctx, "alice", "../etc"); return err }, workflow.KindNotFound},
		{"stop", func() error { _, err := e.Stop(ctx, "alice", wf.ID); return err }, ""},
		{"stop twice", func() error { _, err := e.Stop(ctx, "alice", wf.ID); return err }, workflow.KindConflict},
		{"round after stop", func() error {
			_, err := e.StartRound(ctx, "alice", wf.ID, engine.NewRound{Prompt: "  "})
			return err
		}, workflow.KindInvalid},
		{"resume", func() error { _, err := e.Resume(ctx, "alice", wf.ID); return err }, ""},
		{"delete while running", func() error { return e.Delete(ctx, "alice", wf.ID) }, ""},
		{"get after delete", func() error { _, err := e.Get(ctx, "alice", wf.ID); return err }, workflow.KindNotFound},
	}
	for _, c := range checks { // in order: each check builds on the previous
		if got := workflow.KindOf(c.call()); got != c.want {
			t.Errorf("%s: kind %q, want %q", c.name, got, c.want)
		}
	}
	if ids, _ := store.Running(ctx); len(ids) != 0 {
		t.Errorf("running after delete: %v", ids)
	}
}

func TestRunningLimitPerUser(t *testing.T) {
	t.Parallel()
	e := newEngine(t, engine.Config{MaxRunningPerUser: 2}, memstore.New(), blocking, callThenComplete)
	ctx := context.Background()
	for i := range 2 {
		if _, err := e.Create(ctx, engine.NewWorkflow{UserID: "alice", Prompt: "p"}); err != nil {
			t.Fatalf("create %d: %v", i, err)
		}
	}
	if _, err := e.Create(ctx, engine.NewWorkflow{UserID: "alice", Prompt: "p"}); workflow.KindOf(err) != workflow.KindTooMany {
		t.Errorf("third running round: %v, want KindTooMany", err)
	}
	if _, err := e.Create(ctx, engine.NewWorkflow{UserID: "bob", Prompt: "p"}); err != nil {
		t.Errorf("another user's round: %v", err)
	}
}

// A mode that returns without persisting anything fails the round instead
// of spinning.
func TestModeWithoutProgressFailsTheRound(t *testing.T) {
	t.Parallel()
	e := newEngine(t, engine.Config{}, memstore.New(), blocking,
		func(context.Context, workflow.Run) error { return nil })
	wf, err := e.Create(context.Background(), engine.NewWorkflow{UserID: "alice", Prompt: "p"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	got, err := e.Wait(ctx, wf.ID)
	if err != nil || got.Status != workflow.StatusFailed || got.StopReason != workflow.StopFailures || got.Error != "internal error" {
		t.Errorf("ended %+v (%v), want failed with a generic error", got, err)
	}
}

// A panicking mode fails its round with a generic error; the engine and
// the process go on.
func TestPanickingModeFailsTheRound(t *testing.T) {
	t.Parallel()
	e := newEngine(t, engine.Config{}, memstore.New(), blocking,
		func(context.Context, workflow.Run) error { panic("bug") })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for range 2 { // the worker survives the first panic
		wf, err := e.Create(ctx, engine.NewWorkflow{UserID: "alice", Prompt: "p"})
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.Wait(ctx, wf.ID)
		if err != nil || got.Status != workflow.StatusFailed || got.Error != "internal error" {
			t.Fatalf("ended %+v (%v), want failed with a generic error", got, err)
		}
	}
}

// A run's commits hand its state over to the store (Commit.Handover), and
// the memory store keeps it: the stats of a model call made after a
// commit reach the store only with the next commit, not through the
// shared state.
func TestHandedOverStateChangesOnlyByCommits(t *testing.T) {
	t.Parallel()
	store := memstore.New()
	storedCalls := make(chan int, 1)
	model := workflow.ModelFunc(func(context.Context, workflow.ModelRequest) (workflow.ModelResponse, error) {
		return workflow.ModelResponse{Text: "{}"}, nil
	})
	e := newEngine(t, engine.Config{}, store, model, func(ctx context.Context, run workflow.Run) error {
		if run.Workflow().Checkpoint.Phase == workflow.PhaseSelect {
			if _, err := run.Generate(ctx, workflow.ModelCall{Stage: workflow.StageOne, Attempt: 1}); err != nil {
				return err
			}
			return run.Checkpoint(ctx, workflow.Checkpoint{Phase: workflow.PhaseParameterize})
		}
		if _, err := run.Generate(ctx, workflow.ModelCall{Stage: workflow.StageTwo, Attempt: 1}); err != nil {
			return err
		}
		stored, err := store.GetWorkflow(ctx, run.Workflow().ID)
		if err != nil {
			return err
		}
		storedCalls <- stored.Stats.LLMCalls
		return callThenComplete(ctx, run)
	})
	_, ended := createAndWait(t, e)
	if got := <-storedCalls; got != 1 {
		t.Errorf("the store's state counted %d model calls before the second call's commit, want 1", got)
	}
	if ended.Stats.LLMCalls != 3 {
		t.Errorf("the round counted %d model calls, want 3", ended.Stats.LLMCalls)
	}
}
