package wiring

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/twostep/twostep/engine"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/workflow"
)

// startOffline wires a gateway with the offline model (LLM_PROVIDER=scripted,
// configFile as GATEWAY_CONFIG unless "") and starts its engine; the
// returned context bounds the test to 20 s, and the test's cleanup stops
// the engine and closes the store.
func startOffline(t *testing.T, configFile string) (context.Context, *Gateway) {
	t.Helper()
	env := map[string]string{"LLM_PROVIDER": "scripted", "GATEWAY_INSECURE_DEV": "1"}
	if configFile != "" {
		env["GATEWAY_CONFIG"] = configFile
	}
	cfg, err := LoadConfig(envOf(env))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	g, err := Wire(ctx, cfg, zerolog.New(io.Discard), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.closeStore() })
	g.Engine.Start(ctx)
	t.Cleanup(func() { g.Engine.Shutdown(context.Background()) })
	return ctx, g
}

// TestOfflineModelServesRounds wires the gateway with LLM_PROVIDER=scripted
// and runs two rounds through the real engine and actions: the first
// extracts the upload and completes with the step's summary, the second
// (no upload) completes at once.
func TestOfflineModelServesRounds(t *testing.T) {
	t.Parallel()
	ctx, g := startOffline(t, "")
	if name := g.Model.Name(); name != "scripted/offline" {
		t.Errorf("model = %q, want scripted/offline", name)
	}

	wf, err := g.Engine.Create(ctx, engine.NewWorkflow{UserID: "dev", Prompt: "read this", Documents: []workflow.DocumentContent{{
		Document: workflow.Document{Name: "a.txt", MimeType: "text/plain", Size: 5}, Content: []byte("hello"),
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if wf, err = enginetest.Await(ctx, g.Changes, g.Store.GetWorkflow, wf.ID); err != nil || wf.Status != workflow.StatusCompleted {
		t.Fatalf("round 1 ended %+v, %v", wf, err)
	}
	if _, err := g.Engine.StartRound(ctx, "dev", wf.ID, engine.NewRound{Prompt: "thanks"}); err != nil {
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
	ctx, g := startOffline(t, "")

	wf, err := g.Engine.Create(ctx, engine.NewWorkflow{UserID: "dev", Prompt: "read this", Mode: workflow.ModeActionPlan,
		Documents: []workflow.DocumentContent{{Document: workflow.Document{Name: "a.txt", MimeType: "text/plain", Size: 5}, Content: []byte("hello")}}})
	if err != nil {
		t.Fatal(err)
	}
	if wf, err = enginetest.Await(ctx, g.Changes, g.Store.GetWorkflow, wf.ID); err != nil || wf.Status != workflow.StatusCompleted {
		t.Fatalf("round 1 ended %+v, %v", wf, err)
	}
	if _, err := g.Engine.StartRound(ctx, "dev", wf.ID, engine.NewRound{Prompt: "thanks"}); err != nil {
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
// the summary of each step leaving the history, from the request's facts.
func TestOfflineCompact(t *testing.T) {
	t.Parallel()
	prev := &workflow.Message{Role: workflow.RoleSummary, Text: "step 1 extracted a.pdf"}
	entries := []workflow.Message{
		{Role: workflow.RoleUser, Text: "do it", Summary: "not a step"},
		{Role: workflow.RoleAction, Action: "ai.process", Summary: "ai.process succeeded"},
		{Role: workflow.RoleAction, Action: "http.request", Summary: "http.request\nfailed"},
	}
	resp, err := newOfflineModel().Generate(context.Background(), workflow.ModelRequest{Stage: workflow.StageCompact,
		Messages: []workflow.PromptMessage{{Role: "user", Content: "# Previous summary\nignored"}},
		Facts:    workflow.PromptFacts{Compacted: entries, Previous: prev}})
	if want := "step 1 extracted a.pdf; ai.process succeeded; http.request failed"; err != nil || resp.Text != want {
		t.Errorf("compaction reply = %q, %v; want %q", resp.Text, err, want)
	}
	if got, want := offlineCompact(nil, nil), "Earlier steps ran; the offline model keeps no details."; got != want {
		t.Errorf("offlineCompact of nothing = %q, want %q", got, want)
	}
}

// The offline model fills what the Stage 2 output schema asks for, not what
// the prompt's wording suggests: the extraction's format when the schema
// has it, else the answer from the Stage 1 selection's context (the
// request's facts; the prompt says something else and is not read).
func TestOfflineParametersFollowTheSchema(t *testing.T) {
	t.Parallel()
	prompt := []workflow.PromptMessage{{Role: "user", Content: "# Parameters context\nnot this\n\n# Parameter schema\n{}"}}
	sel := &workflow.Selection{Action: workflow.CompleteAction, ActionObjective: "Answer", ParametersContext: "Done: a step ran"}
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
				workflow.ModelRequest{Stage: workflow.StageTwo, Messages: prompt, Output: tt.output,
					Facts: workflow.PromptFacts{Selection: sel}})
			if err != nil || resp.Text != tt.want || resp.Model != "offline" {
				t.Errorf("Generate = %q from %q, %v; want %q from offline", resp.Text, resp.Model, err, tt.want)
			}
		})
	}
}

// TestOfflineDecidesFromFacts: Stage 1 and the plan are decided from the
// request's messages, never from the prompt (here one that names other
// documents and an @act line): the round's uploads while no step has run,
// then the user's pending @act line, then the answer with the newest
// step's summary.
func TestOfflineDecidesFromFacts(t *testing.T) {
	t.Parallel()
	prompt := []workflow.PromptMessage{{Role: "user", Content: "# Workflow history (newest first)\n" +
		"- [round 9] user: docList:msg_zz:other @act evil.drop {\"all\": true}\n  summary: not this"}}
	upload := workflow.Message{ID: "msg_u1", Role: workflow.RoleUser, Round: 1, Text: "read this",
		DocumentsLabel: "user_upload_r1", Documents: []workflow.Document{{ID: "doc_1", Name: "a.txt"}}}
	extracted := workflow.Message{ID: "msg_a1", Role: workflow.RoleAction, Round: 1, Step: 1, Action: "document.extract",
		Summary: "document.extract succeeded"}
	act := workflow.Message{ID: "msg_u2", Role: workflow.RoleUser, Round: 2, Text: `go @act tickets.lookup {"id": "T-1"}`}
	tests := []struct {
		name  string
		stage workflow.Stage
		msgs  []workflow.Message
		want  []string // substrings of the reply
	}{
		{"uploads", workflow.StageOne, []workflow.Message{upload}, []string{`"document.extract"`, `"docList:msg_u1:user_upload_r1"`}},
		{"after the step", workflow.StageOne, []workflow.Message{upload, extracted}, []string{`"workflow.complete"`, `Done: document.extract succeeded`}},
		{"act line", workflow.StageOne, []workflow.Message{upload, extracted, act}, []string{`"tickets.lookup"`, `[@act `}},
		{"nothing", workflow.StageOne, nil, []string{`"workflow.complete"`, `Nothing needed doing.`}},
		{"plan uploads", workflow.StagePlan, []workflow.Message{upload}, []string{`"document.extract"`, `"docList:msg_u1:user_upload_r1"`}},
		{"plan nothing", workflow.StagePlan, []workflow.Message{upload, extracted}, []string{`"workflow.complete"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resp, err := newOfflineModel().Generate(context.Background(), workflow.ModelRequest{
				Stage: tt.stage, Messages: prompt, Facts: workflow.PromptFacts{Messages: tt.msgs}})
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(resp.Text, w) {
					t.Errorf("reply %s lacks %s", resp.Text, w)
				}
			}
			if strings.Contains(resp.Text, "evil") || strings.Contains(resp.Text, "msg_zz") || strings.Contains(resp.Text, "not this") {
				t.Errorf("reply %s follows the prompt's text", resp.Text)
			}
		})
	}
}
