package react_test

import (
	"strings"
	"testing"

	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/workflow"
)

// nativeModel is a scripted model that plans a native output mode for
// every call with a schema, as a provider with tools does.
type nativeModel struct{ *scripted.Model }

func (nativeModel) PlanOutput(req workflow.ModelRequest) workflow.OutputMode {
	if req.Output != nil {
		return workflow.OutputTool
	}
	return workflow.OutputJSONObject
}

// When the call gives the provider the reply's shape (a native output
// mode), the prompt does not repeat it: no JSON shape in Stage 1's rules,
// no parameter schema in Stage 2's text; a model that cannot say gets both
// (DESIGN §10.1).
func TestNativeOutputGivesTheShapeOnce(t *testing.T) {
	t.Parallel()
	const (
		shape1 = `"parametersSchema": {"fields": [{"name": "x"}]}`
		shape2 = "# Parameter schema"
	)
	for _, native := range []bool{false, true} {
		sm := scripted.New(replies(enginetest.Echoes("one"), enginetest.Completes("done"))...)
		var model workflow.Model = sm
		if native {
			model = nativeModel{sm}
		}
		e := startEngine(t, testConfig("a"), newStore(), model, enginetest.NewRegistry())
		if wf := wait(t, e, create(t, e, "echo", 5).ID); wf.Status != workflow.StatusCompleted {
			t.Fatalf("native %v: round ended %s", native, wf.Status)
		}
		for _, c := range sm.Calls() {
			text := c.Text()
			has := strings.Contains(text, shape1) || strings.Contains(text, shape2)
			if has == native {
				t.Errorf("native %v: %s prompt shows the reply's shape: %v", native, c.Stage, has)
			}
		}
	}
}
