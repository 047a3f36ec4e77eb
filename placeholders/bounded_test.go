package placeholders

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/twostep/twostep/workflow"
)

// stepsWithResults returns n action messages of one round, each with a
// 400-character result and one document.
func stepsWithResults(n int) []workflow.Message {
	msgs := make([]workflow.Message, n)
	for i := range msgs {
		id := fmt.Sprintf("msg_%02d", i)
		label := fmt.Sprintf("round1_step%d_test_echo", i+1)
		msgs[i] = workflow.Message{ID: id, WorkflowID: "wf_b", Seq: int64(i + 1), Round: 1, Step: i + 1, Role: workflow.RoleAction,
			Action: "test.echo", ActionObjective: fmt.Sprintf("Record region %d", i+1), Status: workflow.MessageSuccess,
			Summary: "test.echo succeeded", Findings: strings.Repeat("x", 400), DocumentsLabel: label,
			Documents: []workflow.Document{{ID: fmt.Sprintf("doc_%02d", i), MessageID: id, Name: "echo.txt", MimeType: "text/plain", Size: 400}}}
	}
	return msgs
}

// The newest entries are shown in full within three eighths of the budget
// (the newest always), the older in one line each with their docList
// reference and no result.
func TestOlderEntriesInOneLine(t *testing.T) {
	t.Parallel()
	h := History(stepsWithResults(6), 2000)
	entries := strings.Split(h, "\n- ")
	if len(entries) != 6 {
		t.Fatalf("%d entries, want 6:\n%s", len(entries), h)
	}
	if !strings.Contains(entries[0], "\n  findings: <data tag=") {
		t.Errorf("the newest entry is not in full:\n%s", entries[0])
	}
	for i, e := range entries[1:] {
		want := fmt.Sprintf("[round 1, step %d] action test.echo: success; Record region %d; documents: docList:msg_%02d:round1_step%d_test_echo",
			5-i, 5-i, 4-i, 5-i)
		if e != want {
			t.Errorf("entry %d = %q, want %q", i+2, e, want)
		}
	}
}

// Past its budget, the documents index shows the newest messages' lists in
// creation order after a line counting the earlier ones.
func TestDocumentsIndexWithin(t *testing.T) {
	t.Parallel()
	msgs := stepsWithResults(12)
	if got, want := DocumentsIndexWithin(msgs, 100_000), DocumentsIndex(msgs); got != want {
		t.Errorf("within a large budget = %q, want the whole index", got)
	}
	got := DocumentsIndexWithin(msgs, 500)
	if n := utf8.RuneCountInString(got); n > 500 {
		t.Errorf("%d runes, over the budget of 500:\n%s", n, got)
	}
	head, rest, _ := strings.Cut(got, "\n")
	if !strings.HasPrefix(head, "(8 earlier document lists not shown;") || !strings.HasPrefix(rest, "docList:msg_08:round1_step9_test_echo") ||
		!strings.HasSuffix(rest, "docItem:doc_11:echo.txt  text/plain, 400 B") {
		t.Errorf("index within 500 runes:\n%s", got)
	}
}
