package react_test

import (
	"context"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/workflow"
)

// stats.byStage sums equal the traces' sums, stage by stage, on both
// stores, over two rounds with rejected and retried replies; and the
// per-stage entries add up to the totals.
func TestByStageMatchesTraces(t *testing.T) {
	t.Parallel()
	stores := map[string]func(testing.TB) workflow.Store{
		"memory": func(testing.TB) workflow.Store { return newStore() },
	}
	if os.Getenv("REDIS_URL") != "" || os.Getenv("CI") != "" {
		stores["redis"] = redisStores(t)
	}
	for name, newStore := range stores {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			store := newStore(t)
			first := withRejections().replies
			model := scripted.New(replies(first, enginetest.Echoes("b"), enginetest.Completes("again"))...)
			e := startEngine(t, testConfig("a"), store, model, enginetest.NewRegistry())
			wf := wait(t, e, create(t, e, "echo a", 5).ID)
			if _, err := e.StartRound(context.Background(), "alice", wf.ID, engine.NewRound{Prompt: "echo b"}); err != nil {
				t.Fatal(err)
			}
			wf = wait(t, e, wf.ID)
			if wf.Status != workflow.StatusCompleted || wf.Round != 2 {
				t.Fatalf("workflow %s round %d: %s", wf.Status, wf.Round, wf.Error)
			}
			want := map[workflow.Stage]workflow.StageStats{}
			for _, tr := range enginetest.Traces(t, store, wf.ID) {
				if tr.Stage == workflow.StageAction && tr.Model == "" && len(tr.Prompt) == 0 {
					continue // the record of an action run, not a model call
				}
				b := want[tr.Stage]
				b.Calls++
				b.PromptTokens += tr.PromptTokens
				b.CompletionTokens += tr.CompletionTokens
				want[tr.Stage] = b
			}
			if diff := cmp.Diff(want, wf.Stats.ByStage.Map()); diff != "" {
				t.Errorf("byStage (-traces +stats):\n%s", diff)
			}
			if want[workflow.StageOne].Calls != 5 || want[workflow.StageTwo].Calls != 5 {
				t.Errorf("traces %+v, want 5 Stage 1 and 5 Stage 2 calls", want)
			}
			var sum workflow.StageStats
			for _, b := range wf.Stats.ByStage.All() {
				sum.Calls += b.Calls
				sum.PromptTokens += b.PromptTokens
				sum.CompletionTokens += b.CompletionTokens
			}
			if sum != (workflow.StageStats{Calls: wf.Stats.LLMCalls, PromptTokens: wf.Stats.PromptTokens, CompletionTokens: wf.Stats.CompletionTokens}) {
				t.Errorf("byStage sums %+v, totals %+v", sum, wf.Stats)
			}
		})
	}
}
