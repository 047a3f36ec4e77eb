package react_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/twostep/twostep/actions"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/redact"
	"github.com/twostep/twostep/workflow"
)

// apiKey stands for a secret the gateway redacts from traces (an LLM API
// key) that the actions registry does not know: only the trace store's
// redaction can scrub it.
const apiKey = "sk-test-SECRET-90417c"

// A React step running the real ai.process: its model call is stored as a
// trace of stage action (through the redacting store, like every trace)
// with the exact prompt ai.process sent, and counted in the stats with the
// step's Stage 1 and Stage 2 calls — also when the call fails.
func TestAIProcessModelCallIsTracedAndCounted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		answer     string // the model's reply to ai.process
		fail       bool   // the model refuses ai.process's call instead
		wantStatus workflow.MessageStatus
	}{
		{name: "answered", answer: "Revenue grew, key " + apiKey, wantStatus: workflow.MessageSuccess},
		{name: "model fails", fail: true, wantStatus: workflow.MessageError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			script := []string{
				enginetest.Select(actions.AIProcessAction, "summarise the figures", nil, "", "aiPrompt"),
				enginetest.Params(map[string]any{"aiPrompt": "Summarise: revenue 12 -> 14."}),
			}
			model := &scripted.Model{Reply: func(n int, req workflow.ModelRequest) (string, error) {
				switch {
				case req.Stage == workflow.StageAction && tt.fail:
					return "", workflow.Errorf(workflow.KindUnavailable, "provider down (key %s)", apiKey)
				case req.Stage == workflow.StageAction:
					return tt.answer, nil
				case n < len(script):
					return script[n], nil
				}
				return "", workflow.Errorf(workflow.KindUnavailable, "script exhausted at call %d", n)
			}}
			reg, err := actions.New(actions.Config{}, model)
			if err != nil {
				t.Fatalf("actions.New: %v", err)
			}
			raw := newStore()
			store := redact.Traces(raw, redact.New(apiKey))
			e := startEngine(t, testConfig("a"), store, model, reg)
			// maxSteps 1: the round ends after this one step, so the stats
			// are exactly the step's.
			wf := wait(t, e, create(t, e, "summarise the figures", 1).ID)

			calls := model.Calls()
			if got, want := stages(calls), []workflow.Stage{workflow.StageOne, workflow.StageTwo, workflow.StageAction}; !cmp.Equal(got, want) {
				t.Fatalf("model calls %v, want %v", got, want)
			}
			var wantStats workflow.Stats
			byStage := map[workflow.Stage]workflow.StageStats{}
			for _, c := range calls {
				wantStats.LLMCalls++
				b := byStage[c.Stage]
				b.Calls++
				if c.Err == nil {
					wantStats.PromptTokens += c.PromptTokens
					wantStats.CompletionTokens += c.CompletionTokens
					b.PromptTokens += c.PromptTokens
					b.CompletionTokens += c.CompletionTokens
				}
				byStage[c.Stage] = b
			}
			wantStats.Actions, wantStats.ByStage = 1, workflow.StageTableOf(byStage)
			if wf.StopReason != workflow.StopMaxSteps || !cmp.Equal(wf.Stats, wantStats) {
				t.Errorf("ended %s/%s with stats %+v, want max_steps with %+v", wf.Status, wf.StopReason, wf.Stats, wantStats)
			}
			msgs := messages(t, raw, wf.ID)
			if len(msgs) < 2 || msgs[1].Action != actions.AIProcessAction || msgs[1].Status != tt.wantStatus {
				t.Fatalf("messages %+v, want the ai.process step with status %s", shapes(msgs), tt.wantStatus)
			}

			traces, err := raw.Traces(context.Background(), wf.ID)
			if err != nil {
				t.Fatal(err)
			}
			var modelTrace *workflow.Trace
			var stageTraces []workflow.Stage
			for i, tr := range traces {
				stageTraces = append(stageTraces, tr.Stage)
				if tr.Stage == workflow.StageAction && len(tr.Prompt) > 0 {
					modelTrace = &traces[i]
				}
			}
			// stage1, stage2, the action's model call, the action's execution.
			if want := []workflow.Stage{workflow.StageOne, workflow.StageTwo, workflow.StageAction, workflow.StageAction}; !cmp.Equal(stageTraces, want) {
				t.Fatalf("trace stages %v, want %v", stageTraces, want)
			}
			if modelTrace == nil {
				t.Fatal("no trace of ai.process's model call")
			}
			sent := calls[2]
			if diff := cmp.Diff(sent.Messages, modelTrace.Prompt); diff != "" {
				t.Errorf("trace prompt differs from what ai.process sent (-sent +trace):\n%s", diff)
			}
			if !strings.Contains(modelTrace.Prompt[1].Content, "Summarise: revenue 12 -> 14.") {
				t.Errorf("traced prompt lacks the instruction: %q", modelTrace.Prompt[1].Content)
			}
			if modelTrace.Round != 1 || modelTrace.Step != 1 || modelTrace.Attempt != 1 || modelTrace.Template != actions.AIProcessAction {
				t.Errorf("trace at round %d step %d attempt %d template %q", modelTrace.Round, modelTrace.Step, modelTrace.Attempt, modelTrace.Template)
			}
			if tt.fail {
				if modelTrace.Response != "" || !strings.Contains(modelTrace.Error, "provider down") || modelTrace.PromptTokens != 0 {
					t.Errorf("failed call traced as response %q, error %q, %d prompt tokens", modelTrace.Response, modelTrace.Error, modelTrace.PromptTokens)
				}
			} else {
				wantResp := strings.ReplaceAll(tt.answer, apiKey, redact.Redacted)
				if modelTrace.Response != wantResp || modelTrace.Error != "" || modelTrace.Model != "scripted" ||
					modelTrace.PromptTokens != sent.PromptTokens || modelTrace.CompletionTokens != sent.CompletionTokens {
					t.Errorf("trace = %+v, want response %q with the call's usage", *modelTrace, wantResp)
				}
			}
			for _, s := range []string{modelTrace.Response, modelTrace.Error} {
				if strings.Contains(s, apiKey) {
					t.Errorf("the stored trace carries the secret: %q", s)
				}
			}
		})
	}
}
