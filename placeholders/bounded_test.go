package placeholders

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/twostep/twostep/workflow"
)

// stepsWithResults returns n action messages of one round, each with a
// 400-character result naming its step and one document.
func stepsWithResults(n int) []workflow.Message {
	msgs := make([]workflow.Message, n)
	for i := range msgs {
		id := fmt.Sprintf("msg_%02d", i)
		label := fmt.Sprintf("round1_step%d_test_echo", i+1)
		msgs[i] = workflow.Message{ID: id, WorkflowID: "wf_b", Seq: int64(i + 1), Round: 1, Step: i + 1, Role: workflow.RoleAction,
			Action: "test.echo", ActionObjective: fmt.Sprintf("Record region %d", i+1), Status: workflow.MessageSuccess,
			Summary:   "test.echo succeeded; result: region",
			Findings:  fmt.Sprintf("region %d figure %d.5 ", i+1, 100+i) + strings.Repeat("x", 380),
			Learnings: []string{fmt.Sprintf("learned %d", i+1)}, DocumentsLabel: label,
			Documents: []workflow.Document{{ID: fmt.Sprintf("doc_%02d", i), MessageID: id, Name: "echo.txt", MimeType: "text/plain", Size: 400}}}
	}
	return msgs
}

// Every sealed entry keeps its summary: the result it quotes (fenced as
// data), its learnings and its docList reference, however old it is; the
// latest section holds the entries since the last seal in full.
func TestOlderEntriesKeepTheirSummary(t *testing.T) {
	t.Parallel()
	s := HistorySections(stepsWithResults(12), Limits{})
	if len(s.Latest) == 0 || len(s.Latest)+len(s.Sealed) != 12 || s.Omitted != "" {
		t.Fatalf("%d latest and %d sealed entries (omitted %q), want 12 in all", len(s.Latest), len(s.Sealed), s.Omitted)
	}
	for _, e := range s.Latest {
		if !strings.Contains(e, "\n  findings: <data tag=") {
			t.Errorf("a latest entry is not in full:\n%s", e)
		}
	}
	for i, e := range s.Sealed {
		step := 12 - len(s.Latest) - i
		for _, want := range []string{fmt.Sprintf("- [round 1, step %d] action test.echo: success — result: <data tag=", step),
			fmt.Sprintf("region %d figure %d.5", step, 99+step), fmt.Sprintf("; learnings: learned %d;", step),
			fmt.Sprintf("; documents: docList:msg_%02d:round1_step%d_test_echo", step-1, step)} {
			if !strings.Contains(e, want) {
				t.Errorf("sealed entry %d lacks %q:\n%s", i, want, e)
			}
		}
		if strings.Contains(e, "\n") || utf8.RuneCountInString(e) > 400 {
			t.Errorf("sealed entry %d is not one short line:\n%s", i, e)
		}
	}
	if got, want := s.Single(), s.LatestText()+"\n"+s.SealedText(); got != want {
		t.Errorf("Single =\n%s\nwant the latest entries, then the sealed ones", got)
	}
}

// The latest section is sealed when the next entry would take it past
// the latest budget, and when a round starts; between seals the sealed
// section stays byte-identical, so a provider's prefix cache serves it.
func TestSealing(t *testing.T) {
	t.Parallel()
	msgs := stepsWithResults(20)
	entry := renderEntry(&msgs[19]).runes // the longest
	limits := Limits{Latest: 3*entry + 2} // three full entries and their newlines
	var seals []int
	prev := noneYet
	for n := 1; n <= len(msgs); n++ {
		s := HistorySections(msgs[:n], limits)
		if got := len(s.Latest); got < 1 || got > 3 {
			t.Fatalf("after step %d: %d latest entries, want 1 to 3", n, got)
		}
		if sealed := s.SealedText(); sealed != prev {
			seals = append(seals, n)
			prev = sealed
		}
	}
	if want := []int{4, 7, 10, 13, 16, 19}; fmt.Sprint(seals) != fmt.Sprint(want) {
		t.Errorf("sealed after steps %v, want %v", seals, want)
	}
	// A new round seals the last round's latest entries.
	next := append(msgs[:5:5], workflow.Message{ID: "msg_u2", WorkflowID: "wf_b", Seq: 6, Round: 2, Role: workflow.RoleUser, Text: "And now?"})
	s := HistorySections(next, limits)
	if len(s.Latest) != 1 || !strings.HasPrefix(s.Latest[0], "- [round 2] user: And now?") || len(s.Sealed) != 5 {
		t.Errorf("at a new round: latest %q, %d sealed, want the user's message alone and 5 sealed", s.Latest, len(s.Sealed))
	}
}

// Compaction folds the oldest sealed entries when the sealed section
// passes the history budget, never a latest one.
func TestCompactionFoldsSealedEntries(t *testing.T) {
	t.Parallel()
	msgs := stepsWithResults(30)
	limits := Limits{History: 3000}
	entries, prev := CompactionWithin(msgs, limits)
	if prev != nil || len(entries) == 0 {
		t.Fatalf("no compaction of a sealed section past its budget: %d entries", len(entries))
	}
	s := HistorySections(msgs, limits)
	if last := entries[len(entries)-1].Step; last >= 30-len(s.Latest) {
		t.Errorf("compaction takes step %d, a latest entry", last)
	}
	if entries[0].Step != 1 {
		t.Errorf("compaction starts at step %d, want the oldest", entries[0].Step)
	}
	if e, _ := CompactionWithin(msgs[:3], limits); len(e) != 0 {
		t.Errorf("a short history compacts %d entries", len(e))
	}
}

// uploads returns a user message of round with n uploaded documents.
func uploads(id string, seq int64, round, n int) workflow.Message {
	m := workflow.Message{ID: id, WorkflowID: "wf_b", Seq: seq, Round: round, Role: workflow.RoleUser, Text: "Read these.",
		DocumentsLabel: fmt.Sprintf("round%d_uploads", round)}
	for i := range n {
		m.Documents = append(m.Documents, workflow.Document{ID: fmt.Sprintf("%s_doc_%02d", id, i), MessageID: id,
			Name: fmt.Sprintf("invoice-%02d.pdf", i), MimeType: "application/pdf", Size: 2048})
	}
	return m
}

// Every document keeps its docItem line within the budget; past it the
// lists actions produced are collapsed to one line first, then earlier
// rounds' uploads, never the current round's.
func TestDocumentsIndexWithin(t *testing.T) {
	t.Parallel()
	msgs := append([]workflow.Message{uploads("msg_u1", 0, 1, 12)}, stepsWithResults(12)...)
	if got, want := DocumentsIndexWithin(msgs, 1, 0), DocumentsIndex(msgs); got != want {
		t.Errorf("within the default budget = %q, want the whole index", got)
	}
	got := DocumentsIndexWithin(msgs, 1, 1500)
	for i := range 12 {
		if !strings.Contains(got, fmt.Sprintf("docItem:msg_u1_doc_%02d:invoice-%02d.pdf", i, i)) {
			t.Errorf("upload %d lost its docItem line:\n%s", i, got)
		}
	}
	if !strings.Contains(got, "docList:msg_00:round1_step1_test_echo  (1 document)\ndocList:msg_01:") || strings.Contains(got, "docItem:doc_00:") {
		t.Errorf("the oldest action output is not collapsed first:\n%s", got)
	}
	if n := utf8.RuneCountInString(got); n > 1500 {
		t.Errorf("%d runes, over the budget of 1,500:\n%s", n, got)
	}
	// In round 2, round 1's uploads are collapsed before round 2's.
	msgs = append(msgs, uploads("msg_u2", 20, 2, 12))
	got = DocumentsIndexWithin(msgs, 2, 1500)
	if !strings.Contains(got, "docList:msg_u1:round1_uploads  (12 documents)\ndocList:msg_00:") || !strings.Contains(got, "docItem:msg_u2_doc_11:invoice-11.pdf") {
		t.Errorf("round 2's index:\n%s", got)
	}
}
