package httpapi

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twostep/twostep/workflow"
)

// largeWorkflow is a workflow at the top of what the API shows: every
// stage counted, a pending approval with 20 parameters, 10 queued rounds
// with 3 documents and a 2 kB prompt each, a 50-step plan checkpoint.
func largeWorkflow() *workflow.Workflow {
	now := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	params := map[string]any{}
	for i := range 20 {
		params[fmt.Sprintf("field%d", i)] = fmt.Sprintf("value %d with some text", i)
	}
	stages := map[workflow.Stage]workflow.StageStats{}
	for _, s := range []workflow.Stage{workflow.StageOne, workflow.StageTwo, workflow.StagePlan, workflow.StageRepair, workflow.StageCompact, workflow.StageAction} {
		stages[s] = workflow.StageStats{Calls: 40, PromptTokens: 90000, CompletionTokens: 4000, CachedTokens: 60000}
	}
	w := &workflow.Workflow{
		ID: "wf_01HX", UserID: "alice", Mode: workflow.ModeReact, Status: workflow.StatusAwaitingApproval,
		Round: 3, Step: 12, MaxSteps: 20, Title: "Summarise the quarterly numbers", CreatedAt: now, UpdatedAt: now,
		Stats: workflow.Stats{LLMCalls: 240, PromptTokens: 540000, CompletionTokens: 24000, Actions: 36, ByStage: workflow.StageTableOf(stages)},
		PendingApproval: &workflow.PendingApproval{ID: "apr_1", Round: 3, Step: 12, Action: "crm.update", ActionObjective: "update the ticket",
			Parameters: params, Documents: []string{"docItem:doc_1:a.txt"}, Connection: "crm", Effect: workflow.EffectWrite,
			RequestedAt: now, ExpiresAt: now.Add(time.Hour), Kind: workflow.ApprovalCall},
		ForkedFrom: workflow.ForkOrigin{WorkflowID: "wf_00", Round: 1, Step: 2},
		Checkpoint: &workflow.Checkpoint{Step: 12, Phase: workflow.PhaseExecute, Parameters: params},
	}
	var plan struct {
		Plan []workflow.PlanStep `json:"plan"`
	}
	for i := range 50 {
		plan.Plan = append(plan.Plan, workflow.PlanStep{Action: "ai.process", Parameters: params, ResultLabel: fmt.Sprint("r", i)})
	}
	mode, err := workflow.NewModeState(plan)
	if err != nil {
		panic(err)
	}
	w.Checkpoint.Mode = mode
	for i := range 10 {
		q := workflow.QueuedRound{MessageID: fmt.Sprint("msg_q", i), Prompt: strings.Repeat("next prompt ", 170), QueuedAt: now}
		for j := range 3 {
			q.Documents = append(q.Documents, workflow.Document{ID: fmt.Sprint("doc_", i, j), WorkflowID: w.ID, Name: "a.pdf", MimeType: "application/pdf", Size: 1 << 20})
		}
		w.QueuedRounds = append(w.QueuedRounds, q)
	}
	return w
}

// largeMessages is 200 action messages, each with 10 parameters, 2
// documents, a 300-character summary and 3 learnings.
func largeMessages() []workflow.Message {
	now := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	msgs := make([]workflow.Message, 200)
	for i := range msgs {
		params := map[string]any{}
		for j := range 10 {
			params[fmt.Sprint("p", j)] = float64(j * 1000)
		}
		msgs[i] = workflow.Message{ID: fmt.Sprint("msg_", i), WorkflowID: "wf_01HX", Seq: int64(i + 1), Round: 1, Step: i,
			Role: workflow.RoleAction, Text: strings.Repeat("result ", 40), Action: "ai.process", ActionObjective: "process the data",
			Parameters: params, Status: workflow.MessageSuccess, DocumentsLabel: "round1_step1_ai_process",
			Documents: []workflow.Document{{ID: "doc_a", Name: "a.txt", MimeType: "text/plain", Size: 10}, {ID: "doc_b", Name: "b.txt", MimeType: "text/plain", Size: 20}},
			Summary:   strings.Repeat("s", 300), Findings: strings.Repeat("f", 200), Learnings: []string{"one", "two", "three"}, CreatedAt: now}
	}
	return msgs
}

func BenchmarkViewWorkflow(b *testing.B) {
	w := largeWorkflow()
	b.ReportAllocs()
	for b.Loop() {
		_ = viewWorkflow(w)
	}
}

func BenchmarkViewMessages200(b *testing.B) {
	msgs := largeMessages()
	b.ReportAllocs()
	for b.Loop() {
		for _, m := range msgs {
			_ = viewMessage(m)
		}
	}
}

// BenchmarkEncodeMessages200 is the reference: encoding the 200 views as
// the response does.
func BenchmarkEncodeMessages200(b *testing.B) {
	msgs := largeMessages()
	views := make([]any, len(msgs))
	for i, m := range msgs {
		views[i] = viewMessage(m)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(views); err != nil {
			b.Fatal(err)
		}
	}
}
