package economy_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/twostep/twostep/economy"
	"github.com/twostep/twostep/workflow"
)

// The plain loop's transcript is append-only across rounds: a failed step
// is a tool call like any other, an answer stays in the transcript, and a
// compaction summary is not the loop's.
func TestPlainLoopTranscript(t *testing.T) {
	t.Parallel()
	calls := economy.PlainLoop(economy.PlainInput{
		Actions: []workflow.ActionSpec{{Name: "x.y", Description: "d", Parameters: []byte(`not json`)}},
		Messages: []workflow.Message{
			{Round: 1, Role: workflow.RoleUser, Text: "do it"},
			{Round: 1, Step: 1, Role: workflow.RoleAction, Action: "x.y", Status: workflow.MessageError, Text: "x.y failed: no"},
			{Round: 1, Step: 2, Role: workflow.RoleAssistant, Text: "a1"},
			{Round: 2, Role: workflow.RoleSummary, Text: "summary of round 1"},
			{Round: 2, Role: workflow.RoleUser, Text: "again"},
			{Round: 2, Step: 1, Role: workflow.RoleAssistant, Text: "a2"},
		},
		Count: byteCount,
	})
	base := `tools: [{"type":"function","function":{"name":"x.y","description":"d","parameters":{"type":"object"}}}]` +
		"\nsystem: " + economy.PlainSystemPrompt + "\nuser: do it"
	call := `{"name":"x.y","arguments":{}}`
	r1 := base + "\nassistant: " + call + "\ntool: x.y failed: no"
	r2 := r1 + "\nassistant: a1\nuser: again"
	want := []economy.PlainCall{
		{Round: 1, Step: 1, Request: base, Tokens: len(base), Output: call},
		{Round: 1, Step: 2, Request: r1, Tokens: len(r1), Output: "a1"},
		{Round: 2, Step: 1, Request: r2, Tokens: len(r2), Output: "a2"},
	}
	if diff := cmp.Diff(want, calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}
