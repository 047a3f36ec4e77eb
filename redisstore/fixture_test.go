package redisstore_test

import (
	"encoding/json"
	"time"

	"github.com/twostep/twostep/workflow"
	"github.com/twostep/twostep/workflow/experiment"
)

// The values TestStoredLayoutsRead stores and reads back: two workflows
// of two users, one running mid-round (a React checkpoint nesting
// another, messages with documents, parameters and an approval, traces
// committed with a step and one appended alone), one awaiting approval
// in action-plan mode. Every optional part of the records is set
// somewhere, so a layout that loses one fails the test.

// Fixture ids and users. Bob's user id needs escaping in keys.
const (
	fixtureA, fixtureB = "wf_fixture_a", "wf_fixture_b"
	fixtureAlice       = "alice"
	fixtureBob         = "bob@example.com/ü"
)

func fixtureTime(minute int) time.Time {
	return time.Date(2025, 3, 14, 9, minute, 26, 535897000, time.UTC)
}

// fixtureDocs are workflow A's documents: a user upload and an action
// output, with their contents.
func fixtureDocs() []workflow.DocumentContent {
	return []workflow.DocumentContent{
		{Document: workflow.Document{ID: "doc_upload", MessageID: "msg_user", Name: "brief <v2>.txt", MimeType: "text/plain"},
			Content: []byte("Quarterly numbers: 12, 15 & 18.\n")},
		{Document: workflow.Document{ID: "doc_output", MessageID: "msg_action", Name: "summary.md", MimeType: "text/markdown"},
			Content: []byte{}},
	}
}

// fixtureWorkflowA is workflow A as it reads after its second commit.
func fixtureWorkflowA() *workflow.Workflow {
	return &workflow.Workflow{
		ID: fixtureA, UserID: fixtureAlice, Mode: workflow.ModeReact, Status: workflow.StatusRunning,
		Round: 2, Step: 3, MaxSteps: 12, Title: "Quarterly \"numbers\"", Error: "",
		Stats: workflow.Stats{LLMCalls: 7, PromptTokens: 4100, CompletionTokens: 350, Actions: 2,
			ByStage: workflow.StageTableOf(map[workflow.Stage]workflow.StageStats{
				workflow.StageOne:     {Calls: 4, PromptTokens: 3000, CompletionTokens: 200, CachedTokens: 1024},
				workflow.StageTwo:     {Calls: 2, PromptTokens: 900, CompletionTokens: 100},
				workflow.StageCompact: {Calls: 1, PromptTokens: 200, CompletionTokens: 50},
			})},
		CreatedAt: fixtureTime(1), UpdatedAt: fixtureTime(5), Version: 2,
		Checkpoint: &workflow.Checkpoint{
			Step: 3, Phase: workflow.PhaseExecute,
			Selection: &workflow.Selection{Action: "text.summarize", ActionObjective: "Sum up the brief",
				Learnings: []string{"numbers grow", "é ✓"}, RequiredInputDocuments: []string{"docItem:doc_upload:brief <v2>.txt"},
				RequiredConnection: "crm", ParametersContext: "Keep it short.\nThree lines.",
				ParametersSchema: workflow.ParametersSchema{Fields: []workflow.FieldSpec{
					{Name: "length", Type: "number", Required: true, Description: "lines"},
					{Name: "tone", Type: "enum"},
				}}},
			Parameters: map[string]any{"length": 3.0, "tone": "plain", "tags": []any{"a", 1.5, true, nil},
				"nested": map[string]any{"k": "v"}},
			Failures: 1, Attempt: 2, Feedback: []string{"length must be a number"}, MaxTokens: 2048,
			Previous: "stage2 said: {\"length\": \"three\"}", Mode: fixtureMode(fixtureModeMembers{CompactionSkipped: true}),
			Approval: &workflow.ApprovalGrant{ID: "apr_1", Parameters: map[string]any{"length": 3.0},
				Kind: workflow.ApprovalCall, Constraints: map[string]any{"length": map[string]any{"max": 5.0}}},
			AfterReject: &workflow.Checkpoint{Step: 3, Phase: workflow.PhaseSelect, Failures: 1,
				Feedback: []string{"the user rejected the call"}},
		},
		TraceContext: workflow.TraceContext{Origin: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", Round: "00-4bf92f3577b34da6a3ce929d0e0e4736-b7ad6b7169203331-01"},
		ForkedFrom:   workflow.ForkOrigin{WorkflowID: "wf_parent", Round: 1, Step: 4},
		QueuedRounds: []workflow.QueuedRound{{MessageID: "msg_queued", Prompt: "and then the chart",
			Documents: []workflow.Document{{ID: "doc_q", WorkflowID: fixtureA, MessageID: "msg_queued", Name: "q.csv", MimeType: "text/csv", Size: 9}},
			Interrupt: true, QueuedAt: fixtureTime(4)}},
		QueueEdits: 3,
	}
}

// fixtureMessagesA are workflow A's messages as they read: the first
// committed with the create, the second with the update.
func fixtureMessagesA() []workflow.Message {
	docs := fixtureDocs()
	meta := func(i int) workflow.Document {
		d := docs[i].Document
		d.WorkflowID, d.Size = fixtureA, int64(len(docs[i].Content))
		return d
	}
	return []workflow.Message{
		{ID: "msg_user", WorkflowID: fixtureA, Seq: 1, Round: 1, Role: workflow.RoleUser,
			Text: "Summarize the brief <please> & be quick", DocumentsLabel: "round1_user_context",
			Documents: []workflow.Document{meta(0)}, CreatedAt: fixtureTime(1)},
		{ID: "msg_action", WorkflowID: fixtureA, Seq: 2, Round: 1, Step: 1, Role: workflow.RoleAction,
			Text: "summarized", Action: "text.summarize", ActionObjective: "Sum up the brief",
			Parameters: map[string]any{"length": 3.0, "list": []any{"x", map[string]any{"y": false}}},
			Status:     workflow.MessageSuccess, DocumentsLabel: "round1_step1_text_summarize",
			Documents: []workflow.Document{meta(1)}, Summary: "success: text.summarize produced summary.md",
			Findings: "Numbers grow\u2028quarterly", Learnings: []string{"keep it short"}, CompactedThrough: 1,
			ApprovedBy: &workflow.ApprovedBy{StandingApprovalID: "sa_1", GrantedBy: "carol"}, CreatedAt: fixtureTime(3)},
	}
}

// fixtureTracesA are workflow A's traces, oldest first: two committed
// with the steps, the last appended alone.
func fixtureTracesA() []workflow.Trace {
	return []workflow.Trace{
		{ID: "trc_1", WorkflowID: fixtureA, Round: 1, Step: 1, Stage: workflow.StageOne, Attempt: 1, Template: "stage1.tmpl",
			Inputs: map[string]string{"USER_PROMPT": "Summarize", "WORKFLOW_HISTORY": "(none)"},
			Prompt: []workflow.PromptMessage{{Role: workflow.PromptSystem, Content: "You choose <one> action.\n"},
				{Role: "user", Content: "Summarize the brief"}},
			Response: "```json\n{\"action\":\"text.summarize\"}\n```",
			Parsed:   json.RawMessage(`{"action":"text.summarize","learnings":["a"],"n":1.5}`),
			Model:    "gpt-test", PromptTokens: 1500, CompletionTokens: 80, CachedTokens: 1024, CacheWriteTokens: 12,
			LatencyMs: 731, FinishReason: "stop", Retries: 1, OutputMode: workflow.OutputJSONSchema,
			Ungrounded: []string{"Q4"}, CreatedAt: fixtureTime(2)},
		{ID: "trc_2", WorkflowID: fixtureA, Round: 1, Step: 1, Stage: workflow.StageTwo, Attempt: 2, Template: "stage2.tmpl",
			Prompt:   []workflow.PromptMessage{},
			Response: "not json", Error: "reply is not JSON: invalid character 'o'", Model: "gpt-test",
			PromptTokens: 300, CompletionTokens: 20, LatencyMs: 120, CreatedAt: fixtureTime(2)},
		{ID: "trc_3", WorkflowID: fixtureA, Round: 2, Step: 2, Stage: workflow.StageAction, Template: "",
			Response: "ok", Parsed: json.RawMessage(`[1,"two",null]`), CreatedAt: fixtureTime(5)},
	}
}

// fixtureWorkflowB is workflow B as it reads: created awaiting approval
// of an action plan's step.
func fixtureWorkflowB() *workflow.Workflow {
	return &workflow.Workflow{
		ID: fixtureB, UserID: fixtureBob, Mode: workflow.ModeActionPlan, Status: workflow.StatusAwaitingApproval,
		Round: 1, Step: 2, MaxSteps: 5, Error: "previous step failed: timeout",
		CreatedAt: fixtureTime(10), UpdatedAt: fixtureTime(11), Version: 1,
		Checkpoint: &workflow.Checkpoint{Step: 2, Phase: workflow.PhasePlan, Failures: 0,
			Mode: fixtureMode(fixtureModeMembers{Plan: []workflow.PlanStep{
				{Action: "document.extract", Parameters: map[string]any{"pages": []any{1.0, 2.0}}, ResultLabel: "pages",
					Documents: []string{"docList:pages"}, Connection: "erp-test"},
				{Action: "mail.send", Parameters: nil},
			}, PlanIndex: 1, Replans: 2})},
		PendingApproval: &workflow.PendingApproval{ID: "apr_b", Round: 1, Step: 2, Action: "mail.send",
			ActionObjective: "Mail the pages", Parameters: map[string]any{"to": "dave@example.com"},
			Documents: []string{"docList:pages"}, Connection: "erp-test", Effect: workflow.EffectWrite,
			RequestedAt: fixtureTime(11), ExpiresAt: fixtureTime(41), Kind: workflow.ApprovalIntent,
			ParametersContext: "Send to Dave.",
			Fields:            []workflow.FieldSpec{{Name: "to", Type: "string", Required: true}}},
	}
}

// fixtureSubscription is workflow A's webhook subscription.
func fixtureSubscription() *workflow.WebhookSubscription {
	return &workflow.WebhookSubscription{URL: "https://hooks.example.com/in?a=1&b=2", Events: []string{"round.completed"}, Secret: "s3cret"}
}

// fixtureDelivery is the webhook delivery workflow A's update enters.
func fixtureDelivery() workflow.WebhookDelivery {
	return workflow.WebhookDelivery{ID: "hk_1", WorkflowID: fixtureA, UserID: fixtureAlice, Event: "round.completed",
		URL: "https://hooks.example.com/in?a=1&b=2", Secret: "s3cret", Body: []byte(`{"event":"round.completed"}`),
		CreatedAt: fixtureTime(5), Status: workflow.DeliveryPending, NextAttempt: fixtureTime(6)}
}

// fixtureStanding is Alice's standing approval, stored by PutStanding.
func fixtureStanding() workflow.StandingApproval {
	expires := fixtureTime(59).Add(24 * time.Hour)
	return workflow.StandingApproval{ID: "sa_1", UserID: fixtureAlice, Action: "text.summarize", Kind: workflow.ApprovalCall,
		Scope: workflow.ScopeWorkflow, WorkflowID: fixtureA, Constraints: map[string]any{"length": map[string]any{"max": 5.0}},
		Parameters: map[string]any{"tone": "plain"}, GrantedBy: "carol", GrantedAt: fixtureTime(2), ExpiresAt: &expires}
}

// The idempotency key Alice's answer is kept under, and the answer.
const fixtureIdemKey = "idem-key-1"

func fixtureAnswer() workflow.IdempotentAnswer {
	return workflow.IdempotentAnswer{Hash: "9f86d081884c7d65", Status: 201,
		Header: map[string][]string{"Location": {"/api/v1/workflows/wf_fixture_a"}}, Body: []byte(`{"id":"wf_fixture_a"}`)}
}

// fixtureExperiment is a finished experiment.
func fixtureExperiment() *experiment.Experiment {
	return &experiment.Experiment{ID: experiment.PrefixExperiment + "fixture1", Status: experiment.StatusCompleted,
		Stage: workflow.StageOne, Error: "one call failed", CreatedAt: fixtureTime(20), UpdatedAt: fixtureTime(21)}
}

// fixtureCommits are the writes that store the fixture: workflow A's
// create (with its webhook subscription) and update (entering a
// delivery) and workflow B's create, and then the trace AppendTrace
// adds. Each commit's workflow is a fresh value.
func fixtureCommits() (commits []workflow.Commit, appended workflow.Trace) {
	a1 := fixtureWorkflowA()
	a1.Version, a1.Step, a1.Checkpoint, a1.QueuedRounds, a1.QueueEdits = 0, 1, nil, nil, 0
	msgs, docs, traces := fixtureMessagesA(), fixtureDocs(), fixtureTracesA()
	for i := range msgs {
		msgs[i].WorkflowID, msgs[i].Seq = "", 0
	}
	b := fixtureWorkflowB()
	b.Version = 0
	return []workflow.Commit{
		{Workflow: a1, Messages: msgs[:1], Documents: docs[:1], Traces: traces[:2], Webhook: fixtureSubscription()},
		{Workflow: fixtureWorkflowA(), ExpectedVersion: 1, Messages: msgs[1:], Documents: docs[1:],
			Webhooks: []workflow.WebhookDelivery{fixtureDelivery()}},
		{Workflow: b},
	}, traces[2]
}

// fixtureModeMembers are the members of the modes' checkpoint states
// (actionplan's, then React's) as those modes write them: the fixture's
// records hold them where Checkpoint's fields of the same names were.
type fixtureModeMembers struct {
	Plan              []workflow.PlanStep `json:"plan,omitempty"`
	PlanIndex         int                 `json:"planIndex,omitempty"`
	Replans           int                 `json:"replans,omitempty"`
	CompactionSkipped bool                `json:"compactionSkipped,omitempty"`
}

// fixtureMode is m as a checkpoint's mode state.
func fixtureMode(m fixtureModeMembers) workflow.ModeState {
	s, err := workflow.NewModeState(m)
	if err != nil {
		panic(err)
	}
	return s
}
