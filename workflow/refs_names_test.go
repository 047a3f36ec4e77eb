package workflow_test

import (
	"strings"
	"testing"

	"github.com/twostep/twostep/placeholders"
	"github.com/twostep/twostep/workflow"
)

// Every docItem reference the documents index shows the model resolves,
// also for file names the index has to put on one line (whitespace runs,
// tabs, newlines, no-break spaces, surrounding spaces — user uploads keep
// their names as given).
func TestIndexReferencesResolveForAnyFileName(t *testing.T) {
	t.Parallel()
	names := []string{"Q3  report.pdf", "notes.txt ", "a\tb.csv", "line\nbreak.md", "x\u00a0y.txt", "plain.txt"}
	msg := workflow.Message{ID: "msg_u1", WorkflowID: "wf_a", Seq: 1, Round: 1, Role: workflow.RoleUser, DocumentsLabel: "round1_user_context"}
	for i, n := range names {
		msg.Documents = append(msg.Documents, workflow.Document{ID: "doc_" + string(rune('a'+i)), WorkflowID: "wf_a", MessageID: "msg_u1", Name: n})
	}
	msgs := []workflow.Message{msg}
	var refs []string
	for _, line := range strings.Split(placeholders.DocumentsIndex(msgs), "\n") {
		if ref, ok := strings.CutPrefix(line, "  "); ok {
			ref, _, _ = strings.Cut(ref, "  ") // the reference, then "  <mimeType>, <size>"
			refs = append(refs, ref)
		}
	}
	if len(refs) != len(names) {
		t.Fatalf("index shows %d docItem references, want %d:\n%s", len(refs), len(names), placeholders.DocumentsIndex(msgs))
	}
	for i, ref := range refs {
		t.Run(ref, func(t *testing.T) {
			docs, err := workflow.ResolveDocuments(msgs, []string{ref})
			if err != nil || len(docs) != 1 || docs[0].ID != msg.Documents[i].ID {
				t.Errorf("ResolveDocuments(%q) = %v, %v; want document %s (%q)", ref, docs, err, msg.Documents[i].ID, names[i])
			}
		})
	}
	if _, err := workflow.ResolveDocuments(msgs, []string{"docItem:doc_a:Q3 other.pdf"}); err == nil {
		t.Error("a reference naming another file still resolves")
	}
}
