package placeholders

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/twostep/twostep/workflow"
)

func docs(msgID string, names ...string) []workflow.Document {
	out := make([]workflow.Document, len(names))
	for i, n := range names {
		out[i] = workflow.Document{ID: fmt.Sprintf("doc_%s%d", strings.TrimPrefix(msgID, "msg_"), i+1), WorkflowID: "wf_1",
			MessageID: msgID, Name: n, MimeType: "text/plain", Size: int64(100 * (i + 1) * (i + 1) * 20)}
	}
	return out
}

func TestDocumentsIndex(t *testing.T) {
	t.Parallel()
	msgs := []workflow.Message{
		{ID: "msg_u1", Seq: 1, Round: 1, Role: workflow.RoleUser, DocumentsLabel: "round1_user_context", Documents: docs("msg_u1", "brief.txt", "data.csv")},
		{ID: "msg_a1", Seq: 2, Round: 1, Step: 1, Role: workflow.RoleAction, Action: "ai.process"},
		{ID: "msg_a2", Seq: 3, Round: 1, Step: 2, Role: workflow.RoleAction, DocumentsLabel: "round1_step2_ai_process", Documents: docs("msg_a2", "out\nfile.md")},
	}
	// In creation order: a new message's documents are appended, so the
	// index so far stays a byte prefix of the next one.
	want := "docList:msg_u1:round1_user_context  (2 documents)\n" +
		"  docItem:doc_u11:brief.txt  text/plain, 2.0 KB\n" +
		"  docItem:doc_u12:data.csv  text/plain, 7.8 KB\n" +
		"docList:msg_a2:round1_step2_ai_process  (1 document)\n" +
		"  docItem:doc_a21:out file.md  text/plain, 2.0 KB"
	if got := DocumentsIndex(msgs); got != want {
		t.Errorf("DocumentsIndex() =\n%s\nwant\n%s", got, want)
	}
	if before := DocumentsIndex(msgs[:2]); !strings.HasPrefix(want, before) {
		t.Errorf("the index before the last message, %q, is not a prefix of the index after it", before)
	}
	if got := DocumentsIndex(nil); got != "(no documents)" {
		t.Errorf("DocumentsIndex(nil) = %q", got)
	}
}

func TestFormatSize(t *testing.T) {
	t.Parallel()
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KB", 1536: "1.5 KB", 5 << 20: "5.0 MB", 3 << 30: "3.0 GB"} {
		if got := formatSize(n); got != want {
			t.Errorf("formatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestConnectionsIndex(t *testing.T) {
	t.Parallel()
	got := ConnectionsIndex([]workflow.Connection{
		{Label: "crm", Kind: "salesforce", Description: "Customer\nrecords"},
		{Label: "erp-test", Kind: "erp"},
	})
	want := "- crm (kind: salesforce): Customer records\n- erp-test (kind: erp)"
	if got != want {
		t.Errorf("ConnectionsIndex() =\n%s\nwant\n%s", got, want)
	}
	if got := ConnectionsIndex(nil); got != "(no connections)" {
		t.Errorf("ConnectionsIndex(nil) = %q", got)
	}
}

func TestMethods(t *testing.T) {
	t.Parallel()
	got := Methods([]workflow.ActionSpec{
		{Name: "crm.update", Description: "Update a CRM record.", Effect: workflow.EffectWrite, ConnectionKind: "crm", ConnectionRequired: true,
			Parameters: json.RawMessage(`{"type":"object","properties":{"record":{"type":"string"},"fields":{"type":"object"},"mode":{"enum":["a","b"]}},"required":["record"]}`)},
		{Name: "ai.process", Description: "Process text.", Documents: workflow.DocumentsOptional, Parameters: json.RawMessage(`{"type":"object"}`)},
	})
	want := "- crm.update [write]: Update a CRM record.\n" +
		"  parameters: record (required, string), fields (object), mode (enum)\n" +
		"  connection: crm (required)\n" +
		"- ai.process [read]: Process text.\n" +
		"  parameters: (none)\n" +
		"  input documents: optional"
	if got != want {
		t.Errorf("Methods() =\n%s\nwant\n%s", got, want)
	}
}

func TestUserPromptText(t *testing.T) {
	t.Parallel()
	msgs := []workflow.Message{
		{Round: 1, Role: workflow.RoleUser, Text: "first"},
		{Round: 1, Role: workflow.RoleAssistant, Text: "answer"},
		{Round: 2, Role: workflow.RoleUser, Text: "second"},
	}
	for round, want := range map[int]string{1: "first", 2: "second", 3: "second"} {
		if got := UserPromptText(msgs, round); got != want {
			t.Errorf("UserPromptText(round %d) = %q, want %q", round, got, want)
		}
	}
}

func TestStageTwoSchema(t *testing.T) {
	t.Parallel()
	action := workflow.ActionSpec{Name: "crm.update", Parameters: json.RawMessage(`{
		"type": "object",
		"properties": {
			"record": {"type": "string", "description": "Record id."},
			"amount": {"type": "number"},
			"note": {"type": "string", "maxLength": 200},
			"unused": {"type": "boolean"}
		},
		"required": ["record"],
		"additionalProperties": false
	}`)}
	fields := []workflow.FieldSpec{
		{Name: "note", Type: "string", Description: "Why the record changes"},
		{Name: "record", Type: "string", Description: "The customer's record"},
		{Name: "invented", Type: "string"},
		{Name: "documentList", Type: "object"},
	}
	got, err := StageTwoSchema(action, fields)
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "type": "object",
  "properties": {
    "record": {"description":"Record id. (for this step: The customer's record)","type":"string"},
    "note": {"description":"Why the record changes","maxLength":200,"type":"string"}
  },
  "required": ["record"],
  "additionalProperties": false
}`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("StageTwoSchema() (-want +got):\n%s", diff)
	}
	if !json.Valid([]byte(got)) {
		t.Error("schema is not valid JSON")
	}

	t.Run("open schema shows fields it lacks", func(t *testing.T) {
		open := workflow.ActionSpec{Name: "ai.process", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}
		got, err := StageTwoSchema(open, []workflow.FieldSpec{{Name: "tone", Type: "enum", Description: "formal or casual"}, {Name: "history", Type: "string"}})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(got, `"tone": {`) || !strings.Contains(got, `"type":"string"`) || strings.Contains(got, "history") {
			t.Errorf("StageTwoSchema(open) =\n%s", got)
		}
	})
	t.Run("open schema shows integer and array fields", func(t *testing.T) {
		open := workflow.ActionSpec{Name: "ai.process", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}
		got, err := StageTwoSchema(open, []workflow.FieldSpec{{Name: "count", Type: "integer"},
			{Name: "tags", Type: "array", Items: "string"}, {Name: "any", Type: "array"}})
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{`"count": {"type":"integer"}`, `"tags": {"items":{"type":"string"},"type":"array"}`, `"any": {"type":"array"}`} {
			if !strings.Contains(got, want) {
				t.Errorf("StageTwoSchema(open) =\n%s\nwant it to contain %s", got, want)
			}
		}
	})
	t.Run("no fields", func(t *testing.T) {
		got, err := StageTwoSchema(workflow.ActionSpec{Name: "x.y"}, nil)
		if err != nil || !json.Valid([]byte(got)) || !strings.Contains(got, `"properties": {}`) {
			t.Errorf("StageTwoSchema(empty) = %s, %v", got, err)
		}
	})
	t.Run("broken registered schema", func(t *testing.T) {
		if _, err := StageTwoSchema(workflow.ActionSpec{Name: "x.y", Parameters: json.RawMessage(`[1]`)}, nil); workflow.KindOf(err) != workflow.KindInternal {
			t.Errorf("error = %v, want internal", err)
		}
	})
}

func TestHistoryBudgetNeverExceeded(t *testing.T) {
	t.Parallel()
	msgs := historyMessages(200)
	for _, budget := range []int{200, 260, 500, 2000, 12000} {
		got := History(msgs, budget)
		if n := utf8.RuneCountInString(HistorySections(msgs, Limits{History: budget}).SealedText()); n > budget {
			t.Errorf("the sealed section (budget %d) has %d characters", budget, n)
		}
		if !strings.HasPrefix(got, "- [round 4, step 49]") {
			t.Errorf("History(budget %d) does not start with the newest entry: %.60q", budget, got)
		}
		if !strings.Contains(got, "older entries omitted)") {
			t.Errorf("History(budget %d) does not say entries were omitted", budget)
		}
	}
}

// historyMessages returns n action messages over 4 rounds in seq order.
func historyMessages(n int) []workflow.Message {
	msgs := make([]workflow.Message, n)
	for i := range msgs {
		round := 1 + i*4/n
		msgs[i] = workflow.Message{
			ID: fmt.Sprintf("msg_%04d", i), Seq: int64(i + 1), Round: round, Step: i % 50, Role: workflow.RoleAction,
			Action: "ai.process", ActionObjective: "Summarise part " + fmt.Sprint(i), Status: workflow.MessageSuccess,
			Summary: "ai.process succeeded; result: a summary of part " + fmt.Sprint(i), Findings: strings.Repeat("finding ", 20),
			Learnings: []string{"the data is in part " + fmt.Sprint(i)},
		}
		if i%5 == 0 {
			msgs[i].DocumentsLabel = fmt.Sprintf("round%d_step%d_ai_process", round, i%50)
			msgs[i].Documents = docs(msgs[i].ID, "part.md")
		}
	}
	return msgs
}

// BenchmarkHistory1000 renders a 1,000-message history through a prompt
// builder's Cache.
func BenchmarkHistory1000(b *testing.B) {
	msgs := historyMessages(1000)
	c := NewCache()
	b.ReportAllocs()
	start := processCPU()
	for b.Loop() {
		_ = c.History(msgs, DefaultHistoryBudget)
	}
	// Wall time is skewed on a shared machine; CPU time per op is not.
	b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
}

// appendSize writes what its former fmt.Sprintf formulas wrote.
func TestFormatSizeMatchesSprintf(t *testing.T) {
	t.Parallel()
	ref := func(n int64) string {
		if n < 1024 {
			return fmt.Sprintf("%d B", n)
		}
		div, exp := int64(1024), 0
		for m := n / 1024; m >= 1024 && exp < 4; m /= 1024 {
			div *= 1024
			exp++
		}
		return fmt.Sprintf("%.1f %cB", float64(n)/float64(div), "KMGTP"[exp])
	}
	for _, n := range []int64{-5, 0, 1, 999, 1023, 1024, 1075, 1076, 1587, 1048575, 1048576, 1 << 40, 1 << 50, 1 << 60, 1<<63 - 1} {
		if got, want := formatSize(n), ref(n); got != want {
			t.Errorf("formatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

// formatSize renders n as the placeholders do.
func formatSize(n int64) string { return string(appendSize(nil, n)) }

// BenchmarkDocumentsIndex renders the documents index of a 1,000-message
// history (every fifth message carries documents, one or two), as every
// Stage 1 call does: one allocation, the index itself.
func BenchmarkDocumentsIndex(b *testing.B) {
	msgs := historyMessages(1000)
	for i := range msgs {
		if i%10 == 5 && len(msgs[i].Documents) > 0 {
			msgs[i].Documents = append(msgs[i].Documents, msgs[i].Documents[0])
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = DocumentsIndex(msgs)
	}
}
