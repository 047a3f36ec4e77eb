package prompts

import (
	"fmt"
	"strings"
	"testing"

	"github.com/twostep/twostep/placeholders"
	"github.com/twostep/twostep/workflow"
)

func TestParseSummary(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, reply, want, problem string
		limit                      int
	}{
		{"plain", "  Steps 1-3 read the contract.\n", "Steps 1-3 read the contract.", "", 100},
		{"fenced", "```text\nSteps 1-3 read the contract.\n```", "Steps 1-3 read the contract.", "", 100},
		{"cut to the limit", strings.Repeat("ä", 50), strings.Repeat("ä", 9) + "…", "", 10},
		{"empty", " \n ", "", "the summary is empty: write the summary as plain text", 100},
		{"empty fence", "```\n```", "", "the summary is empty: write the summary as plain text", 100},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, parsed, problem := ParseSummary(tc.reply, tc.limit)
			if got != tc.want || problem != tc.problem {
				t.Errorf("ParseSummary = %q, %q; want %q, %q", got, problem, tc.want, tc.problem)
			}
			if problem == "" && !strings.Contains(string(parsed), `"summary"`) {
				t.Errorf("parsed = %s", parsed)
			}
		})
	}
}

// A compaction summarises only the entries its prompt shows: when the
// entries leaving the history are more than the prompt holds (four history
// budgets), the later ones stay in the history for the next compaction
// instead of leaving it unread.
func TestCompactionTakesOnlyWhatThePromptShows(t *testing.T) {
	t.Parallel()
	wf := &workflow.Workflow{ID: "wf_c", UserID: "u1", Mode: workflow.ModeReact, Status: workflow.StatusRunning, Round: 1, Step: 18, MaxSteps: 40}
	msgs := []workflow.Message{{ID: "msg_u", WorkflowID: "wf_c", Seq: 1, Round: 1, Role: workflow.RoleUser, Text: "Read every page."}}
	for i := 1; i <= 24; i++ {
		msgs = append(msgs, workflow.Message{ID: fmt.Sprintf("msg_%02d", i), WorkflowID: "wf_c", Seq: int64(i + 1), Round: 1, Step: i,
			Role: workflow.RoleAction, Action: "records.page", ActionObjective: fmt.Sprintf("Read page %d of the incident log and note any outage it records.", i), Status: workflow.MessageSuccess,
			Summary: "records.page succeeded", Findings: fmt.Sprintf("Page %d. ", i) + strings.Repeat("x", 400)})
	}
	b := newBuilder(t, 2000)
	entries, _ := b.Compaction(msgs)
	all, _ := placeholders.Compaction(msgs, 2000)
	if len(entries) == 0 || len(entries) >= len(all) {
		t.Fatalf("%d entries of the %d leaving the history: the case does not exceed the prompt", len(entries), len(all))
	}
	r, err := b.Compact(CompactInput{Workflow: wf, Messages: msgs, Entries: entries})
	if err != nil {
		t.Fatal(err)
	}
	prompt := r.Messages[len(r.Messages)-1].Content
	if strings.Contains(prompt, "left out") {
		t.Errorf("the prompt leaves entries out that the summary would replace:\n%s", prompt)
	}
	last := entries[len(entries)-1]
	if !strings.Contains(prompt, fmt.Sprintf("[round 1, step %d]", last.Step)) {
		t.Errorf("the prompt does not show the last entry compacted, step %d", last.Step)
	}
}
