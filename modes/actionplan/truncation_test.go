package actionplan_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/workflow"
)

// A planning reply cut at the token limit is not read, even when the cut
// text is a valid plan: the repair call quotes it with the cause.
func TestTruncatedPlanIsNotReadButRepaired(t *testing.T) {
	t.Parallel()
	store, reg := newStore(), enginetest.NewRegistry()
	script := scripted.New(planJSON(echo("cut", ""), complete("cut")), planJSON(echo("alpha", ""), complete("done")))
	model := workflow.ModelFunc(func(ctx context.Context, req workflow.ModelRequest) (workflow.ModelResponse, error) {
		first := len(script.Calls()) == 0
		resp, err := script.Generate(ctx, req)
		if first {
			resp.Truncated, resp.StopReason = true, "max_tokens"
		}
		return resp, err
	})
	e := startEngine(t, testConfig("a"), store, model, reg)
	wf := wait(t, e, create(t, e, "echo alpha", 5).ID)
	if wf.Status != workflow.StatusCompleted {
		t.Fatalf("ended %s (%s)", wf.Status, wf.Error)
	}
	calls := script.Calls()
	if diff := cmp.Diff([]workflow.Stage{stPlan, stRepair}, stages(calls)); diff != "" {
		t.Fatalf("model calls (-want +got):\n%s", diff)
	}
	if p := calls[1].Text(); !strings.Contains(p, `cut off at the token limit (stop reason "max_tokens"`) {
		t.Errorf("repair prompt lacks the cause:\n%s", p)
	}
	if ex := reg.Calls(); len(ex) != 1 || ex[0].Parameters["text"] != "alpha" {
		t.Errorf("executions = %+v, want only the repaired plan's echo", ex)
	}
}
