package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/memstore"
	"github.com/twostep/twostep/workflow"
)

// An action's model calls are traced with stage action and counted in the
// stats by the commit of the step, not before it; a stage call's trace
// keeps the provider's finish reason and the retries before its answer.
func TestRecordActionCallsTracesAndCountsWithTheStep(t *testing.T) {
	t.Parallel()
	calls := []workflow.ActionModelCall{
		{Template: "ai.process", Prompt: []workflow.PromptMessage{{Role: "system", Content: "sys"}, {Role: "user", Content: "do it"}},
			Response: "done", Model: "m1", PromptTokens: 30, CompletionTokens: 4, LatencyMs: 12},
		{Template: "ai.process", Prompt: []workflow.PromptMessage{{Role: "user", Content: "again"}},
			Error: "model call failed: 503", PromptTokens: 0, CompletionTokens: 0, LatencyMs: 3},
	}
	rec := &recorder{}
	store := memstore.New()
	var beforeCommit workflow.Stats
	step := func(ctx context.Context, run workflow.Run) error {
		if _, err := run.Generate(ctx, workflow.ModelCall{Stage: workflow.StageOne, Attempt: 1}); err != nil {
			return err
		}
		run.RecordActionCalls(ctx, calls)
		stored, err := store.GetWorkflow(ctx, run.Workflow().ID)
		if err != nil {
			return err
		}
		beforeCommit = stored.Stats
		return run.CommitStep(ctx, workflow.StepResult{
			Action:   "ai.process",
			Messages: []workflow.Message{{ID: workflow.NewID(workflow.PrefixMessage), Role: workflow.RoleAssistant, Text: "done"}},
			Executed: true,
			End:      &workflow.RoundEnd{Status: workflow.StatusCompleted, Reason: workflow.StopCompleted},
		})
	}
	model := workflow.ModelFunc(func(context.Context, workflow.ModelRequest) (workflow.ModelResponse, error) {
		return workflow.ModelResponse{Text: "{}", PromptTokens: 10, CompletionTokens: 2, StopReason: "stop", Retries: 2}, nil
	})
	e := newEngine(t, engine.Config{Observer: rec}, store, model, step)
	wf, err := e.Create(context.Background(), engine.NewWorkflow{UserID: "alice", Prompt: "p"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	got, err := e.Wait(ctx, wf.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantStats := workflow.Stats{LLMCalls: 3, PromptTokens: 40, CompletionTokens: 6, Actions: 1,
		ByStage: workflow.StageTableOf(map[workflow.Stage]workflow.StageStats{
			workflow.StageOne:    {Calls: 1, PromptTokens: 10, CompletionTokens: 2},
			workflow.StageAction: {Calls: 2, PromptTokens: 30, CompletionTokens: 4},
		})}
	if diff := cmp.Diff(wantStats, got.Stats); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
	if !cmp.Equal(beforeCommit, workflow.Stats{}, cmpopts.EquateEmpty()) {
		t.Errorf("stats stored before the step's commit = %+v, want none yet", beforeCommit)
	}

	traces, err := store.Traces(ctx, wf.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := []workflow.Trace{
		{WorkflowID: wf.ID, Round: 1, Step: 1, Stage: workflow.StageOne, Attempt: 1, Response: "{}", PromptTokens: 10, CompletionTokens: 2,
			FinishReason: "stop", Retries: 2, OutputMode: workflow.OutputText},
		{WorkflowID: wf.ID, Round: 1, Step: 1, Stage: workflow.StageAction, Attempt: 1, Template: "ai.process", Prompt: calls[0].Prompt,
			Response: "done", Model: "m1", PromptTokens: 30, CompletionTokens: 4, LatencyMs: 12, OutputMode: workflow.OutputText},
		{WorkflowID: wf.ID, Round: 1, Step: 1, Stage: workflow.StageAction, Attempt: 2, Template: "ai.process", Prompt: calls[1].Prompt,
			Error: "model call failed: 503", LatencyMs: 3, OutputMode: workflow.OutputText},
	}
	ignore := cmpopts.IgnoreFields(workflow.Trace{}, "ID", "CreatedAt", "LatencyMs", "Prompt")
	if diff := cmp.Diff(want, traces, ignore); diff != "" {
		t.Errorf("traces (-want +got):\n%s", diff)
	}
	for i := 1; i < len(traces) && i < len(want); i++ {
		if traces[i].ID == "" || traces[i].CreatedAt.IsZero() || traces[i].LatencyMs != want[i].LatencyMs {
			t.Errorf("trace %d: id %q, createdAt %v, latency %d", i, traces[i].ID, traces[i].CreatedAt, traces[i].LatencyMs)
		}
		if diff := cmp.Diff(want[i].Prompt, traces[i].Prompt); diff != "" {
			t.Errorf("trace %d prompt (-want +got):\n%s", i, diff)
		}
	}

	rec.mu.Lock()
	defer rec.mu.Unlock()
	wantEvents := []string{"model stage1 ok", "model action ok", "model action error", "step react ai.process success", "round completed"}
	if diff := cmp.Diff(wantEvents, rec.events); diff != "" {
		t.Errorf("observer events (-want +got):\n%s", diff)
	}
}
