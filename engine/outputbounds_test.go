package engine

import (
	"testing"

	"github.com/twostep/twostep/workflow"
)

// TestOutputBounds: a call reserves its maxTokens when it sets one, else
// one and a half times the most its stage's recent replies wrote (at
// least minReservedOutput, at most DefaultReservedOutput), else
// DefaultReservedOutput; each stage learns apart and forgets replies older
// than outputWindow.
func TestOutputBounds(t *testing.T) {
	t.Parallel()
	var b outputBounds
	if got := b.bound(workflow.StageOne, 0); got != DefaultReservedOutput {
		t.Errorf("nothing learned: %d, want %d", got, DefaultReservedOutput)
	}
	if got := b.bound(workflow.StageOne, 700); got != 700 {
		t.Errorf("maxTokens 700: %d", got)
	}
	b.learn(workflow.StageOne, 200)
	b.learn(workflow.StageOne, 100)
	if got := b.bound(workflow.StageOne, 0); got != 300 {
		t.Errorf("after replies of 200 and 100: %d, want 300", got)
	}
	if got := b.bound(workflow.StageTwo, 0); got != DefaultReservedOutput {
		t.Errorf("another stage: %d, want %d", got, DefaultReservedOutput)
	}
	b.learn(workflow.StageTwo, 10)
	if got := b.bound(workflow.StageTwo, 0); got != minReservedOutput {
		t.Errorf("after a reply of 10: %d, want %d", got, minReservedOutput)
	}
	b.learn(workflow.StageTwo, 100000)
	if got := b.bound(workflow.StageTwo, 0); got != DefaultReservedOutput {
		t.Errorf("after a huge reply: %d, want %d", got, DefaultReservedOutput)
	}
	for range outputWindow {
		b.learn(workflow.StageOne, 20)
	}
	if got := b.bound(workflow.StageOne, 0); got != minReservedOutput {
		t.Errorf("after %d replies of 20: %d, want %d (older ones forgotten)", outputWindow, got, minReservedOutput)
	}
}
