package actionplan_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twostep/twostep/modes/actionplan"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/workflow"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run with -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", name, diff)
	}
}

// transcript renders a prompt as the model sees it, one block per message.
func transcript(r prompts.Rendered) string {
	var b strings.Builder
	for _, m := range r.Messages {
		b.WriteString("--- " + m.Role + " ---\n" + m.Content + "\n")
	}
	return b.String()
}

// secondRound is a workflow in its second round: round 1 uploaded a report
// and extracted it; round 2 asks for more.
func secondRound() (*workflow.Workflow, []workflow.Message) {
	at := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	wf := &workflow.Workflow{ID: "wf_golden", UserID: "alice", Mode: workflow.ModeActionPlan, Status: workflow.StatusRunning,
		Round: 2, Step: 1, MaxSteps: 6}
	msgs := []workflow.Message{
		{ID: "msg_u1", WorkflowID: wf.ID, Seq: 1, Round: 1, Role: workflow.RoleUser, Text: "Here is the Q3 report.",
			DocumentsLabel: "round1_user_context", CreatedAt: at,
			Documents: []workflow.Document{{ID: "doc_r1", WorkflowID: wf.ID, MessageID: "msg_u1", Name: "q3-report.pdf",
				MimeType: "application/pdf", Size: 48213}}},
		{ID: "msg_a1", WorkflowID: wf.ID, Seq: 2, Round: 1, Step: 1, Role: workflow.RoleAction, Action: "document.extract",
			ActionObjective: "plan step 1 of 1", Status: workflow.MessageSuccess, DocumentsLabel: "q3_text",
			Summary: "document.extract succeeded: 1 document (q3_text): Revenue grew 12%...", Findings: "Revenue grew 12% to 4.1M.",
			Parameters: map[string]any{"format": "markdown"}, CreatedAt: at.Add(time.Minute),
			Documents: []workflow.Document{{ID: "doc_t1", WorkflowID: wf.ID, MessageID: "msg_a1", Name: "q3-report.md",
				MimeType: "text/markdown", Size: 5120}}},
		{ID: "msg_x1", WorkflowID: wf.ID, Seq: 3, Round: 1, Step: 2, Role: workflow.RoleAssistant,
			Text: "I carried out the plan for this round: 1 step.", CreatedAt: at.Add(2 * time.Minute)},
		{ID: "msg_u2", WorkflowID: wf.ID, Seq: 4, Round: 2, Role: workflow.RoleUser, CreatedAt: at.Add(time.Hour),
			Text: "Summarize the extracted report, translate the summary to German and email it to the CFO."},
	}
	return wf, msgs
}

func TestPlanPromptGolden(t *testing.T) {
	t.Parallel()
	wf, msgs := secondRound()
	m := actionplan.New(newBuilder(t), actionplan.Options{TopK: 3})
	conns := []workflow.Connection{{Label: "crm", Kind: "http", Description: "the CRM"}, {Label: "mail", Kind: "smtp", Description: "company mail"}}
	r, err := m.PlanPrompt(wf, msgs, catalogue(), conns)
	if err != nil {
		t.Fatalf("PlanPrompt: %v", err)
	}
	if r.Template != "plan" {
		t.Errorf("template = %q, want plan", r.Template)
	}
	methods := r.Placeholders["AVAILABLE_METHODS"]
	for _, name := range []string{"document.extract", "translate.text", "email.send", workflow.CompleteAction} {
		if !strings.Contains(methods, "- "+name+" ") {
			t.Errorf("AVAILABLE_METHODS lacks %s:\n%s", name, methods)
		}
	}
	if strings.Contains(methods, "weather.forecast") || strings.Count(methods, "\n- ") != 3 {
		t.Errorf("AVAILABLE_METHODS is not the top 3 plus workflow.complete:\n%s", methods)
	}
	golden(t, "plan_prompt.golden", transcript(r))
}

func TestRepairPromptGolden(t *testing.T) {
	t.Parallel()
	specs := actionplan.Relevant(catalogue(), "email the summary", 2)
	reply := "First I will summarize the report, then send it by email."
	_, perr := actionplan.ParsePlan(reply)
	r, err := newBuilder(t).Repair(prompts.RepairInput{
		Previous: reply, Actions: specs, Feedback: prompts.Feedback([]string{workflow.PublicMessage(perr)}),
	})
	if err != nil {
		t.Fatalf("Repair: %v", err)
	}
	golden(t, "repair_prompt.golden", transcript(r))
}
