package bench

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/workflow"
)

// TestCostWorkloadsAreGrounded runs every workload of the cost comparison
// through the engine and counts the Stage 2 values its traces list as
// ungrounded (DESIGN §10.4): the scripts take every value from Stage 1's
// objective and context, so each one flagged is a false positive of the
// check (go test -run TestCostWorkloadsAreGrounded -v prints the counts).
func TestCostWorkloadsAreGrounded(t *testing.T) {
	ctx := context.Background()
	var calls, values, flagged int
	for _, w := range CostWorkloads() {
		run, err := RunCostWorkload(ctx, w)
		if err != nil {
			t.Fatalf("%s: %v", w.Name, err)
		}
		for _, tr := range run.Traces {
			if tr.Stage != workflow.StageTwo || tr.Error != "" {
				continue
			}
			var reply struct {
				Parameters map[string]any `json:"parameters"`
			}
			if err := json.Unmarshal(tr.Parsed, &reply); err != nil {
				t.Fatalf("%s, step %d: parsed reply: %v", w.Name, tr.Step, err)
			}
			calls++
			values += len(reply.Parameters)
			flagged += len(tr.Ungrounded)
			if len(tr.Ungrounded) > 0 {
				t.Errorf("%s, step %d: ungrounded %q in %s", w.Name, tr.Step, tr.Ungrounded, tr.Parsed)
			}
		}
	}
	t.Logf("%d Stage 2 replies, %d values, %d flagged ungrounded", calls, values, flagged)
}

// TestGroundingCatchesChangedFigures changes every digit of each workload
// value that has one (7 → 8, 9 → 0) and counts how many of those invented
// values the check flags: the other side of the false-positive count.
func TestGroundingCatchesChangedFigures(t *testing.T) {
	shift := strings.NewReplacer("0", "1", "1", "2", "2", "3", "3", "4", "4", "5", "5", "6", "6", "7", "7", "8", "8", "9", "9", "0")
	var changed, caught int
	for _, w := range CostWorkloads() {
		for _, s := range w.steps {
			g := prompts.Grounding{Objective: s.objective, Context: s.context, Action: s.action}
			for k, v := range s.params {
				var invented any
				switch v := v.(type) {
				case string:
					if shift.Replace(v) == v {
						continue
					}
					invented = shift.Replace(v)
				case int:
					invented = float64(v + 1)
				default:
					continue
				}
				changed++
				if len(prompts.Ungrounded(map[string]any{k: invented}, g)) > 0 {
					caught++
				} else {
					t.Logf("%s: %v not flagged (context %q)", w.Name, invented, s.context)
				}
			}
		}
	}
	t.Logf("%d values with a changed figure, %d flagged ungrounded", changed, caught)
	if changed == 0 || caught == 0 {
		t.Errorf("%d changed values, %d caught: the check catches no invented figure", changed, caught)
	}
}
