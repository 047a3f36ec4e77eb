package workflow

import "testing"

// The engine (Run.IdempotencyKey) and the registry (a call without a key)
// must give a step the same key; DESIGN fixes its form.
func TestStepKey(t *testing.T) {
	t.Parallel()
	if got := StepKey("wf_01abc", 2, 13); got != "wf_01abc:2:13" {
		t.Errorf("StepKey = %q, want wf_01abc:2:13", got)
	}
}
