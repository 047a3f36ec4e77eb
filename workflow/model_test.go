package workflow_test

import (
	"testing"

	"github.com/twostep/twostep/workflow"
)

func TestApproxTokens(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int{"": 0, "a": 1, "abcd": 1, "abcde": 2, "twelve chars": 3} {
		if got := workflow.ApproxTokens(in); got != want {
			t.Errorf("ApproxTokens(%q) = %d, want %d", in, got, want)
		}
	}
}

// PromptTokens counts each message's text plus 4 a message and 3 for the
// reply.
func TestPromptTokens(t *testing.T) {
	t.Parallel()
	msgs := []workflow.PromptMessage{{Content: "abcde"}, {Content: ""}}
	if got, want := workflow.PromptTokens(msgs, workflow.ApproxTokens), 3+(4+2)+(4+0); got != want {
		t.Errorf("PromptTokens = %d, want %d", got, want)
	}
}
