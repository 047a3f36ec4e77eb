package messages

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/twostep/twostep/textclip"
	"github.com/twostep/twostep/workflow"
)

var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func TestLabels(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"ai.process":       "round2_step4_ai_process",
		"document.extract": "round2_step4_document_extract",
		"odd name.x:y":     "round2_step4_odd_name_x_y",
	}
	for action, want := range tests {
		got := ActionLabel(2, 4, action)
		if got != want {
			t.Errorf("ActionLabel(2, 4, %q) = %q, want %q", action, got, want)
		}
		if _, err := workflow.ParseReference("docList:" + got); err != nil {
			t.Errorf("label %q is not a valid reference label: %v", got, err)
		}
	}
}

func TestNewAction(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("word ", 400)
	tests := []struct {
		name        string
		in          ActionInput
		status      workflow.MessageStatus
		label       string
		summary     string
		findings    string
		text        string
		wantDocsLen int
	}{
		{
			name: "success with documents",
			in: ActionInput{Action: "ai.process", Result: workflow.ActionResult{Text: "Total:\n 42 EUR", Documents: []workflow.DocumentContent{
				{Document: workflow.Document{Name: "a.pdf", MimeType: "application/pdf"}, Content: []byte("%PDF")},
				{Document: workflow.Document{Name: "b.csv"}, Content: []byte("x,y")},
			}}},
			status: workflow.MessageSuccess, label: "round1_step3_ai_process",
			summary:  "ai.process succeeded; 2 documents (a.pdf, b.csv) as round1_step3_ai_process; result: Total: 42 EUR",
			findings: "Total: 42 EUR", text: "Total:\n 42 EUR", wantDocsLen: 2,
		},
		{
			name: "plan result label",
			in: ActionInput{Action: "ai.process", Label: "invoice_totals", Result: workflow.ActionResult{Documents: []workflow.DocumentContent{
				{Document: workflow.Document{Name: "t.txt"}, Content: []byte("1")}}}},
			status: workflow.MessageSuccess, label: "invoice_totals",
			summary: "ai.process succeeded; 1 document (t.txt) as invoice_totals; no text result", wantDocsLen: 1,
		},
		{
			name:   "error",
			in:     ActionInput{Action: "crm.update", Err: errors.New("crm answered 503:\nservice down")},
			status: workflow.MessageError, summary: "crm.update failed: crm answered 503: service down",
			text: "crm answered 503:\nservice down",
		},
		{
			name:     "long result is cut",
			in:       ActionInput{Action: "ai.process", Result: workflow.ActionResult{Text: long}},
			status:   workflow.MessageSuccess,
			summary:  textclip.Excerpt("ai.process succeeded; result: "+strings.TrimSpace(long), MaxSummary),
			findings: textclip.Excerpt(strings.TrimSpace(long), MaxFindings), text: long,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := tt.in
			in.WorkflowID, in.Round, in.Step, in.Now = "wf_1", 1, 3, t0
			in.Objective, in.Learnings = "do it", []string{"a", " ", "b"}
			m, docs := NewAction(in)
			if m.Role != workflow.RoleAction || m.Status != tt.status || m.DocumentsLabel != tt.label || m.Text != tt.text {
				t.Errorf("message = role %s status %s label %q text %q", m.Role, m.Status, m.DocumentsLabel, m.Text)
			}
			if m.Summary != tt.summary {
				t.Errorf("Summary =\n%q\nwant\n%q", m.Summary, tt.summary)
			}
			if utf8.RuneCountInString(m.Summary) > MaxSummary {
				t.Errorf("Summary has %d characters", utf8.RuneCountInString(m.Summary))
			}
			if m.Findings != tt.findings {
				t.Errorf("Findings = %q, want %q", m.Findings, tt.findings)
			}
			if diff := cmp.Diff([]string{"a", "b"}, m.Learnings); diff != "" || m.ActionObjective != "do it" {
				t.Errorf("learnings (-want +got):\n%s objective %q", diff, m.ActionObjective)
			}
			if len(docs) != tt.wantDocsLen || len(m.Documents) != tt.wantDocsLen {
				t.Fatalf("got %d contents, %d metadata, want %d", len(docs), len(m.Documents), tt.wantDocsLen)
			}
			for _, d := range m.Documents {
				if d.MessageID != m.ID || d.WorkflowID != "wf_1" {
					t.Errorf("document %+v not bound to message %s", d, m.ID)
				}
			}
		})
	}
}

func TestNewFailedStep(t *testing.T) {
	t.Parallel()
	reason := "Stage 1 rejected 3 times: " + strings.Repeat("action \"x.y\" is not a registered action; ", 20)
	m := NewFailedStep(FailedStepInput{WorkflowID: "wf_1", Round: 1, Step: 2, Reason: reason, Now: t0})
	if m.Status != workflow.MessageError || m.Role != workflow.RoleAction || m.Text != reason || m.Step != 2 {
		t.Errorf("NewFailedStep = %+v", m)
	}
	if !strings.HasPrefix(m.Summary, "step failed: Stage 1 rejected 3 times: action") || utf8.RuneCountInString(m.Summary) != MaxSummary {
		t.Errorf("Summary = %q (%d characters)", m.Summary, utf8.RuneCountInString(m.Summary))
	}
}

func TestNewMaxSteps(t *testing.T) {
	t.Parallel()
	msgs := []workflow.Message{
		{Round: 1, Step: 1, Role: workflow.RoleAction, Action: "old.step", Summary: "from round 1"},
		{Round: 2, Role: workflow.RoleUser, Text: "go"},
		{Round: 2, Step: 1, Role: workflow.RoleAction, Action: "ai.process", Status: workflow.MessageSuccess, Summary: "ai.process succeeded; result: ok",
			Documents: []workflow.Document{{ID: "doc_1", Name: "r.md"}}},
		{Round: 2, Step: 2, Role: workflow.RoleAction, Status: workflow.MessageError, Summary: "step failed: Stage 1 rejected 3 times"},
	}
	m := NewMaxSteps(MaxStepsInput{WorkflowID: "wf_1", Round: 2, Step: 2, MaxSteps: 2, Messages: msgs, Now: t0})
	want := "I stopped because this round reached its limit of 2 steps before the request was completed.\n\n" +
		"What was done in this round:\n" +
		"1. ai.process (success): ai.process succeeded; result: ok\n" +
		"   - document r.md (docItem:doc_1:r.md)\n" +
		"2. no action (error): step failed: Stage 1 rejected 3 times\n\n" +
		"Start another round to continue from here."
	if diff := cmp.Diff(want, m.Text); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}
	if m.Role != workflow.RoleAssistant || m.Round != 2 {
		t.Errorf("NewMaxSteps role %s round %d", m.Role, m.Round)
	}
	empty := NewMaxSteps(MaxStepsInput{Round: 3, MaxSteps: 1, Messages: msgs})
	if !strings.Contains(empty.Text, "No step was completed in this round.") {
		t.Errorf("empty round text = %q", empty.Text)
	}
}

func TestSummaryBoundedOnHugeResult(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("é", 1<<20)
	s := Summary(Observation{Action: "ai.process", Text: huge})
	if n := utf8.RuneCountInString(s); n != MaxSummary || !utf8.ValidString(s) {
		t.Errorf("Summary of a huge result has %d characters, valid %v", n, utf8.ValidString(s))
	}
	if f := Findings(huge); utf8.RuneCountInString(f) != MaxFindings || !utf8.ValidString(f) {
		t.Errorf("Findings of a huge result has %d characters", utf8.RuneCountInString(f))
	}
}
