package react_test

import (
	"context"
	"testing"
	"time"

	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/workflow"
)

// TestActionMessagesSayHowLongTheActionRan: the action message of a step
// carries how long its action ran, on every store, and no other message
// carries a duration.
func TestActionMessagesSayHowLongTheActionRan(t *testing.T) {
	t.Parallel()
	const ran = 40 * time.Millisecond
	step := []string{enginetest.Select(enginetest.Remote, "ask the CRM", nil, "crm")}
	for name, newStore := range forkStores(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			store, reg := newStore(t).store, enginetest.NewRegistry()
			reg.ExecuteFunc = func(context.Context, workflow.ActionCall) (workflow.ActionResult, error) {
				time.Sleep(ran)
				return workflow.ActionResult{Text: "42 open tickets"}, nil
			}
			model := scripted.New(replies(step, enginetest.Completes("42 open tickets"))...)
			e := startEngine(t, testConfig("a"), store, model, reg)
			wf := wait(t, e, create(t, e, "how many tickets are open?", 5).ID)
			if wf.Status != workflow.StatusCompleted {
				t.Fatalf("ended %s (%q), want completed", wf.Status, wf.Error)
			}
			var actions int
			for _, m := range messages(t, store, wf.ID) {
				switch {
				case m.Role == workflow.RoleAction:
					actions++
					if m.DurationMs < ran.Milliseconds() {
						t.Errorf("action message %s: durationMs = %d, want at least %d", m.ID, m.DurationMs, ran.Milliseconds())
					}
				case m.DurationMs != 0:
					t.Errorf("%s message %s has durationMs %d", m.Role, m.ID, m.DurationMs)
				}
			}
			if actions != 1 {
				t.Errorf("%d action messages, want 1", actions)
			}
		})
	}
}
