package experiments_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/experiments"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/workflow"
)

// A Stage 2 template that leaves out the parameters context makes the
// model miss the priority: agreement falls on exactly the nine ticket
// steps and on priority only; nothing executes and the workflow is byte
// for byte what it was.
func TestStage2TemplateDroppingTheContext(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	before, executed := w.snapshot(t), w.executed.Load()
	b, err := os.ReadFile("../templates/stage2.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	dropped := strings.Replace(src, "# Parameters context\n{{KEY:PARAMETERS_CONTEXT}}\n", "", 1)
	if dropped == src {
		t.Fatal("the stage2 template has no parameters context to drop")
	}
	model := filler()
	r := w.runner(t, model, "x")
	ctx := context.Background()
	for name, tmpl := range map[string]string{"unchanged": src, "dropped": dropped} {
		e, err := r.Start(ctx, experiments.Spec{Stage: workflow.StageTwo, Workflows: []string{w.wf.ID}, Templates: map[string]string{"stage2": tmpl}})
		if err != nil {
			t.Fatal(err)
		}
		e = finish(t, r, e.ID)
		if e.Status != experiments.StatusCompleted || e.Totals.Calls != 10 {
			t.Fatalf("%s: %s with %d calls (%s)", name, e.Status, e.Totals.Calls, e.Error)
		}
		wantAgreed := 10
		if name == "dropped" {
			wantAgreed = 1
		}
		if e.Totals.Agreed != wantAgreed {
			t.Errorf("%s: %d calls agree, want %d", name, e.Totals.Agreed, wantAgreed)
		}
		for i, c := range e.Calls {
			if c.Error != "" {
				t.Fatalf("%s call %d: %s", name, i, c.Error)
			}
			if c.Step == 10 {
				if !c.Agreement.All || !c.Agreement.Parameters["message"] {
					t.Errorf("%s: the answer step disagrees: %+v", name, c.Agreement)
				}
				continue
			}
			want := map[string]bool{"title": true, "priority": name == "unchanged"}
			if fmt.Sprint(c.Agreement.Parameters) != fmt.Sprint(want) || c.Agreement.All != (name == "unchanged") {
				t.Errorf("%s step %d: agreement %+v, want parameters %v (recorded %s, new %s)", name, c.Step, c.Agreement, want, c.Recorded, c.Result)
			}
			if c.Agreement.Action != nil || c.Tokens == 0 {
				t.Errorf("%s step %d: Stage 2 scored on action, or no tokens: %+v", name, c.Step, c)
			}
		}
	}
	if n := len(model.Calls()); n != 20 {
		t.Errorf("the experiment model got %d calls, want 20", n)
	}
	if got := w.executed.Load(); got != executed {
		t.Errorf("experiments executed %d actions", got-executed)
	}
	if after := w.snapshot(t); after != before {
		t.Errorf("the workflow changed:\nbefore %s\nafter  %s", before, after)
	}
}

// A Stage 1 experiment on another model scores action, references and
// fields separately.
func TestStage1ScoresActionReferencesAndFields(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	before, executed := w.snapshot(t), w.executed.Load()
	// Step 1: another action; step 2: the same action with the "crm"
	// connection; step 3: the same action and references, one field
	// fewer; the rest as recorded.
	entry := regexp.MustCompile(`\[round 1, step \d+\] action`)
	other := &scripted.Model{Model: "other", Reply: func(_ int, req workflow.ModelRequest) (string, error) {
		step := len(entry.FindAllString(scripted.Call{ModelRequest: req}.Text(), -1)) + 1 // the history lists the steps before
		switch step {
		case 1:
			return enginetest.Select(enginetest.Echo, "echo", nil, "", "text"), nil
		case 2:
			return strings.Replace(selectTicket(2, "high"), `"requiredConnection":null`, `"requiredConnection":"crm"`, 1), nil
		case 3:
			return strings.Replace(selectTicket(3, "high"), `,{"description":"the priority","name":"priority","required":true,"type":"string"}`, "", 1), nil
		case 10:
			return enginetest.Select(workflow.CompleteAction, "answer", nil, "", "message"), nil
		}
		return selectTicket(step, "high"), nil
	}}
	r := w.runner(t, other, "x")
	e, err := r.Start(context.Background(), experiments.Spec{Stage: workflow.StageOne, Workflows: []string{w.wf.ID}})
	if err != nil {
		t.Fatal(err)
	}
	e = finish(t, r, e.ID)
	if e.Status != experiments.StatusCompleted || e.Totals.Calls != 10 || e.Totals.Agreed != 7 {
		t.Fatalf("%s: %d calls, %d agree, want 10 and 7 (%s)", e.Status, e.Totals.Calls, e.Totals.Agreed, e.Error)
	}
	type score struct{ action, refs, fields bool }
	want := map[int]score{1: {false, true, false}, 2: {true, false, true}, 3: {true, true, false}}
	for _, c := range e.Calls {
		if c.Error != "" {
			t.Fatalf("step %d: %s", c.Step, c.Error)
		}
		w, ok := want[c.Step]
		if !ok {
			w = score{true, true, true}
		}
		a := c.Agreement
		if a.Action == nil || a.References == nil || a.Fields == nil || a.Parameters != nil {
			t.Fatalf("step %d: agreement %+v, want action, references and fields", c.Step, a)
		}
		if got := (score{*a.Action, *a.References, *a.Fields}); got != w || a.All != (w == score{true, true, true}) {
			t.Errorf("step %d: scored %+v all=%v, want %+v (recorded %s, new %s)", c.Step, got, a.All, w, c.Recorded, c.Result)
		}
		if c.Model != "other" {
			t.Errorf("step %d answered by %q", c.Step, c.Model)
		}
	}
	if got := w.executed.Load(); got != executed {
		t.Errorf("the experiment executed %d actions", got-executed)
	}
	if after := w.snapshot(t); after != before {
		t.Error("the workflow changed")
	}
}
