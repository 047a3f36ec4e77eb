package actionplan_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/workflow"
)

// An instance crashing between a planning call whose reply held no plan
// and its repair call does not repeat the finished planning call: the
// unusable reply and why it failed are saved first, and the instance that
// takes the round over makes only the repair call, quoting that reply.
func TestCrashBeforeRepairDoesNotRepeatThePlanningCall(t *testing.T) {
	t.Parallel()
	const garbage = "I would rather not plan today."
	mem := newStore()
	dying := enginetest.NewDyingStore(mem, 0)
	first := &scripted.Model{Reply: func(n int, _ workflow.ModelRequest) (string, error) {
		if n == 0 {
			return garbage, nil
		}
		// The repair call: the instance dies while it is in flight.
		dying.Kill()
		return "", scripted.ErrBlock
	}}
	reg := enginetest.NewRegistry()
	e1 := startEngine(t, enginetest.TakeoverConfig("one"), dying, first, reg)
	wf := create(t, e1, "echo a", 5)
	select {
	case <-dying.Died():
	case <-time.After(10 * time.Second):
		t.Fatal("instance one never made a second model call")
	}
	second := scripted.New(planJSON(echo("a", ""), complete("done")))
	e2 := startEngine(t, testConfig("two"), mem, second, reg)
	got := wait(t, e2, wf.ID)
	if got.Status != workflow.StatusCompleted || got.StopReason != workflow.StopCompleted {
		t.Fatalf("ended %s/%s (%s), want completed", got.Status, got.StopReason, got.Error)
	}
	calls := second.Calls()
	if diff := cmp.Diff([]workflow.Stage{workflow.StageRepair}, stages(calls)); diff != "" {
		t.Fatalf("instance two's model calls (-want +got):\n%s", diff)
	}
	if !strings.Contains(calls[0].Text(), garbage) {
		t.Errorf("repair prompt does not quote the unusable reply %q:\n%s", garbage, calls[0].Text())
	}
	if got.Stats.LLMCalls != 2 {
		t.Errorf("stats count %d model calls, want 2 (the plan call and the repair call)", got.Stats.LLMCalls)
	}
}
