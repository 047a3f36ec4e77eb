package wiring

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/twostep/twostep/workflow"
	"github.com/twostep/twostep/workflow/enginetest"
)

// TestOfflineModelServesRounds wires the gateway with LLM_PROVIDER=scripted
// and runs two rounds through the real engine and actions: the first
// extracts the upload and completes with the step's summary, the second
// (no upload) completes at once.
func TestOfflineModelServesRounds(t *testing.T) {
	t.Parallel()
	cfg, err := LoadConfig(envOf(map[string]string{"LLM_PROVIDER": "scripted", "GATEWAY_INSECURE_DEV": "1"}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	g, err := Wire(ctx, cfg, zerolog.New(io.Discard), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.closeStore()
	if name := g.Model.Name(); name != "scripted/offline" {
		t.Errorf("model = %q, want scripted/offline", name)
	}
	g.Engine.Start(ctx)
	defer g.Engine.Shutdown(context.Background())

	wf, err := g.Engine.Create(ctx, workflow.NewWorkflow{UserID: "dev", Prompt: "read this", Documents: []workflow.DocumentContent{{
		Document: workflow.Document{Name: "a.txt", MimeType: "text/plain", Size: 5}, Content: []byte("hello"),
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if wf, err = enginetest.Await(ctx, g.Changes, g.Store.GetWorkflow, wf.ID); err != nil || wf.Status != workflow.StatusCompleted {
		t.Fatalf("round 1 ended %+v, %v", wf, err)
	}
	if _, err := g.Engine.StartRound(ctx, "dev", wf.ID, workflow.NewRound{Prompt: "thanks"}); err != nil {
		t.Fatal(err)
	}
	if wf, err = enginetest.Await(ctx, g.Changes, g.Store.GetWorkflow, wf.ID); err != nil || wf.Status != workflow.StatusCompleted {
		t.Fatalf("round 2 ended %+v, %v", wf, err)
	}
	msgs, err := g.Store.Messages(ctx, wf.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range msgs {
		got = append(got, string(m.Role)+" "+m.Action)
	}
	want := []string{"user ", "action document.extract", "assistant ", "user ", "assistant "}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("messages = %q, want %q", got, want)
	}
	if !strings.Contains(msgs[2].Text, "Done: document.extract succeeded") {
		t.Errorf("round 1 answer %q does not report the step", msgs[2].Text)
	}
	if msgs[1].Status != workflow.MessageSuccess || len(msgs[1].Documents) != 1 {
		t.Errorf("extract message = %+v", msgs[1])
	}
	if wf.Stats.LLMCalls != 6 || wf.Stats.PromptTokens == 0 {
		t.Errorf("stats = %+v, want 6 calls with tokens", wf.Stats)
	}
}

// TestOfflineModelPlans: the offline model also runs the action-plan mode
// end to end, planning the extraction of the round's upload and the end;
// a round with no upload plans only the end.
func TestOfflineModelPlans(t *testing.T) {
	t.Parallel()
	cfg, err := LoadConfig(envOf(map[string]string{"LLM_PROVIDER": "scripted", "GATEWAY_INSECURE_DEV": "1"}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	g, err := Wire(ctx, cfg, zerolog.New(io.Discard), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.closeStore()
	g.Engine.Start(ctx)
	defer g.Engine.Shutdown(context.Background())

	wf, err := g.Engine.Create(ctx, workflow.NewWorkflow{UserID: "dev", Prompt: "read this", Mode: workflow.ModeActionPlan,
		Documents: []workflow.DocumentContent{{Document: workflow.Document{Name: "a.txt", MimeType: "text/plain", Size: 5}, Content: []byte("hello")}}})
	if err != nil {
		t.Fatal(err)
	}
	if wf, err = enginetest.Await(ctx, g.Changes, g.Store.GetWorkflow, wf.ID); err != nil || wf.Status != workflow.StatusCompleted {
		t.Fatalf("round 1 ended %+v, %v", wf, err)
	}
	if _, err := g.Engine.StartRound(ctx, "dev", wf.ID, workflow.NewRound{Prompt: "thanks"}); err != nil {
		t.Fatal(err)
	}
	if wf, err = enginetest.Await(ctx, g.Changes, g.Store.GetWorkflow, wf.ID); err != nil || wf.Status != workflow.StatusCompleted {
		t.Fatalf("round 2 ended %+v, %v", wf, err)
	}
	msgs, err := g.Store.Messages(ctx, wf.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range msgs {
		got = append(got, string(m.Role)+" "+m.Action+" "+string(m.Status))
	}
	want := []string{"user  ", "action document.extract success", "assistant  ", "user  ", "assistant  "}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("messages = %q, want %q", got, want)
	}
	if wf.Stats.LLMCalls != 2 {
		t.Errorf("model calls = %d, want one plan per round", wf.Stats.LLMCalls)
	}
}

// The offline model's compaction summary folds in the previous summary and
// the summary line of each entry leaving the history.
func TestOfflineCompact(t *testing.T) {
	t.Parallel()
	prompt := "# Previous summary\nstep 1 extracted a.pdf\n\n# Entries leaving the history (oldest first)\n" +
		"- [round 1, step 2] action ai.process: success\n  summary: ai.process succeeded\n" +
		"- [round 1, step 3] action http.request: error\n  summary: http.request failed\n\nWrite the summary only."
	got := offlineCompact(prompt)
	if want := "step 1 extracted a.pdf; ai.process succeeded; http.request failed"; got != want {
		t.Errorf("offlineCompact = %q, want %q", got, want)
	}
}

// The offline model fills what the Stage 2 output schema asks for, not what
// the prompt's wording suggests: the extraction's format when the schema
// has it, else the answer from the Stage 1 context.
func TestOfflineParametersFollowTheSchema(t *testing.T) {
	t.Parallel()
	prompt := []workflow.PromptMessage{{Role: "user", Content: "# Parameters context\nDone: a step ran\n\n# Parameter schema\n{}"}}
	tests := []struct {
		name   string
		output *workflow.OutputSchema
		want   string
	}{
		{"format asked", &workflow.OutputSchema{Schema: []byte(`{"type":"object","properties":{"schema":{"type":"string"},` +
			`"parameters":{"type":"object","properties":{"format":{"type":"string"}}}}}`)},
			`{"parameters":{"format":"text"},"schema":"parameters_v1"}`},
		{"message asked", &workflow.OutputSchema{Schema: []byte(`{"type":"object","properties":{"schema":{"type":"string"},` +
			`"parameters":{"type":"object","properties":{"message":{"type":"string"}}}}}`)},
			`{"parameters":{"message":"(offline scripted model) Done: a step ran"},"schema":"parameters_v1"}`},
		{"no schema", nil, `{"parameters":{"message":"(offline scripted model) Done: a step ran"},"schema":"parameters_v1"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resp, err := newOfflineModel().Generate(context.Background(),
				workflow.ModelRequest{Stage: workflow.StageTwo, Messages: prompt, Output: tt.output})
			if err != nil || resp.Text != tt.want || resp.Model != "offline" {
				t.Errorf("Generate = %q from %q, %v; want %q from offline", resp.Text, resp.Model, err, tt.want)
			}
		})
	}
}
