package redisstore

import (
	"testing"
	"time"

	"github.com/twostep/twostep/workflow"
)

// midRound returns a React workflow in the middle of a round as the engine
// commits it: a checkpoint in the execute phase with Stage 1's selection
// and Stage 2's parameters, stats split by stage, a trace context; and the
// action message of the step it is about to commit.
func midRound() (*workflow.Workflow, workflow.Message) {
	at := time.Date(2026, 11, 26, 10, 7, 39, 520008517, time.UTC)
	wf := &workflow.Workflow{
		ID: "wf_01m8bn6dzv8e8yqs43thdat2hr", UserID: "user-42", Mode: workflow.ModeReact, Status: workflow.StatusRunning,
		Round: 1, Step: 4, MaxSteps: 20, Title: "Summarise the quarterly report and mail it to the team",
		Stats: workflow.Stats{LLMCalls: 8, PromptTokens: 9120, CompletionTokens: 640, Actions: 3,
			ByStage: workflow.StageTableOf(map[workflow.Stage]workflow.StageStats{
				workflow.StageOne: {Calls: 4, PromptTokens: 6000, CompletionTokens: 400, CachedTokens: 3072},
				workflow.StageTwo: {Calls: 4, PromptTokens: 3120, CompletionTokens: 240},
			})},
		CreatedAt: at, UpdatedAt: at.Add(3 * time.Second), Version: 12,
		Checkpoint: &workflow.Checkpoint{Step: 4, Phase: workflow.PhaseExecute,
			Selection: &workflow.Selection{Action: "text.echo", ActionObjective: "Echo the summary back to the user",
				Learnings:              []string{"the report has three sections", "the team list is in the second document"},
				RequiredInputDocuments: []string{}, ParametersContext: "The summary written in step 3.",
				ParametersSchema: workflow.ParametersSchema{Fields: []workflow.FieldSpec{
					{Name: "text", Type: "string", Required: true, Description: "The text to echo"}}}},
			Parameters: map[string]any{"text": "Revenue grew 12% over the quarter; costs stayed flat.", "repeat": 1.0}},
		TraceContext: workflow.TraceContext{Origin: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
	}
	msg := workflow.Message{ID: "msg_01m8bn6e008fggp2nd97v07zt9", Round: 1, Step: 4, Role: workflow.RoleAction,
		Text: "Revenue grew 12% over the quarter; costs stayed flat.", Action: "text.echo",
		ActionObjective: "Echo the summary back to the user", Parameters: wf.Checkpoint.Parameters,
		Status: workflow.MessageSuccess, Documents: []workflow.Document{}, Summary: "echoed the summary",
		Learnings: []string{"the echo worked"}, CreatedAt: at.Add(4 * time.Second)}
	return wf, msg
}

// BenchmarkCommitArgs measures the encoding of a mid-round commit's
// arguments: a checkpoint (the state alone) and a step (the state and its
// action message).
func BenchmarkCommitArgs(b *testing.B) {
	wf, msg := midRound()
	for _, bc := range []struct {
		name string
		msgs []workflow.Message
	}{{"checkpoint", nil}, {"step", []workflow.Message{msg}}} {
		b.Run(bc.name, func(b *testing.B) {
			c := workflow.Commit{Workflow: wf, ExpectedVersion: wf.Version - 1, Messages: bc.msgs}
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := commitArgs(wf, c, Options{}, testHead(wf)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
