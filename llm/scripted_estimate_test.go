package llm

import (
	"context"
	"testing"

	"github.com/twostep/twostep/llm/scripted"
)

// TestScriptedEstimatesUsageAsLLMDoes: the scripted model reports the
// usage llm estimates for a provider that reports none, so offline runs
// and tests count tokens as a silent provider would.
func TestScriptedEstimatesUsageAsLLMDoes(t *testing.T) {
	t.Parallel()
	req := prompt("How many tokens is this prompt, roughly?")
	got, err := scripted.New(`{"action":"workflow.complete"}`).Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if want := promptTokens(req.Messages, ApproxTokens); got.PromptTokens != want {
		t.Errorf("prompt tokens = %d, want %d", got.PromptTokens, want)
	}
	if want := ApproxTokens(got.Text); got.CompletionTokens != want {
		t.Errorf("completion tokens = %d, want %d", got.CompletionTokens, want)
	}
}
