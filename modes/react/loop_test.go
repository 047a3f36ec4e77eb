package react_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/twostep/twostep/engine/enginetest"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/workflow"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestLoopWarnsThenEnds: a model that calls echo("same") again and again
// gets a warning naming the repeated steps in the Stage 1 prompt after the
// second repeat, and the third repeat ends the round with stop reason loop
// and a closing message saying so.
func TestLoopWarnsThenEnds(t *testing.T) {
	t.Parallel()
	store, reg := newStore(), enginetest.NewRegistry()
	model := scripted.New(replies(enginetest.Echoes("same"), enginetest.Echoes("same"), enginetest.Echoes("same"),
		enginetest.Echoes("same"), enginetest.Completes("never reached"))...)
	e := startEngine(t, testConfig("a"), store, model, reg)
	wf := wait(t, e, create(t, e, "loop please", 10).ID)

	if wf.Status != workflow.StatusCompleted || wf.StopReason != workflow.StopLoop || wf.Step != 4 {
		t.Fatalf("ended %s/%s at step %d (%q), want completed/loop at step 4", wf.Status, wf.StopReason, wf.Step, wf.Error)
	}
	if n := len(reg.Calls()); n != 4 {
		t.Errorf("echo ran %d times, want 4 (the original and three repeats)", n)
	}
	msgs := messages(t, store, wf.ID)
	last := msgs[len(msgs)-1]
	if last.Role != workflow.RoleAssistant || last.Step != 5 ||
		!strings.Contains(last.Text, "step 4 called test.echo with the same parameters as steps 1, 2 and 3") {
		t.Errorf("closing message (step %d) = %q", last.Step, last.Text)
	}
	var stage1 []string
	for _, c := range model.Calls() {
		if c.Stage == workflow.StageOne {
			stage1 = append(stage1, c.Text())
		}
	}
	if len(stage1) != 4 {
		t.Fatalf("%d Stage 1 calls, want 4", len(stage1))
	}
	for i, p := range stage1[:3] {
		if strings.Contains(p, "# Repeated step") {
			t.Errorf("Stage 1 call %d warns before the second repeat", i+1)
		}
	}
	const head = "# Repeated step\n"
	i := strings.Index(stage1[3], head)
	if i < 0 {
		t.Fatalf("the Stage 1 prompt after the second repeat has no warning:\n%s", stage1[3])
	}
	warning, _, _ := strings.Cut(stage1[3][i:], "\n\n")
	golden(t, "loop_warning.golden", warning)
}

// TestRepeatWithNewResultIsNoLoop: the same call getting a different
// result each time (a changing upstream) is progress, not a loop.
func TestRepeatWithNewResultIsNoLoop(t *testing.T) {
	t.Parallel()
	store, reg := newStore(), enginetest.NewRegistry()
	n := 0
	reg.ExecuteFunc = func(_ context.Context, call workflow.ActionCall) (workflow.ActionResult, error) {
		n++
		return workflow.ActionResult{Text: strings.Repeat("x", n)}, nil
	}
	model := scripted.New(replies(enginetest.Echoes("same"), enginetest.Echoes("same"), enginetest.Echoes("same"),
		enginetest.Echoes("same"), enginetest.Completes("done"))...)
	e := startEngine(t, testConfig("a"), store, model, reg)
	wf := wait(t, e, create(t, e, "poll until done", 10).ID)
	if wf.StopReason != workflow.StopCompleted {
		t.Errorf("stop reason %s, want completed", wf.StopReason)
	}
	for _, c := range model.Calls() {
		if strings.Contains(c.Text(), "# Repeated step") {
			t.Fatal("a call with a new result each time was warned about as a repeat")
		}
	}
}

// TestLoopDetectionOff: LoopRepeats < 0 lets the same call repeat until
// maxSteps.
func TestLoopDetectionOff(t *testing.T) {
	t.Parallel()
	store, reg := newStore(), enginetest.NewRegistry()
	cfg := testConfig("a")
	cfg.LoopRepeats = -1
	model := scripted.New(replies(enginetest.Echoes("same"), enginetest.Echoes("same"), enginetest.Echoes("same"),
		enginetest.Echoes("same"), enginetest.Echoes("same"))...)
	e := startEngine(t, cfg, store, model, reg)
	wf := wait(t, e, create(t, e, "loop please", 5).ID)
	if wf.StopReason != workflow.StopMaxSteps || len(reg.Calls()) != 5 {
		t.Errorf("stop reason %s after %d calls, want max_steps after 5", wf.StopReason, len(reg.Calls()))
	}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", name, diff)
	}
}

// TestRepeatedParameterlessActionIsALoop: an action with no parameters
// called again and again is a loop on every store, although its pending
// message holds an empty parameter map and the messages a store reads
// back may hold none (Redis's JSON round trip omits the empty map).
func TestRepeatedParameterlessActionIsALoop(t *testing.T) {
	t.Parallel()
	ping := []string{enginetest.Select(enginetest.Remote, "ping the CRM", nil, "crm")}
	for name, newStore := range forkStores(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			store, reg := newStore(t).store, enginetest.NewRegistry()
			model := scripted.New(replies(ping, ping, ping, ping, ping, enginetest.Completes("never reached"))...)
			e := startEngine(t, testConfig("a"), store, model, reg)
			wf := wait(t, e, create(t, e, "ping until told", 10).ID)
			if wf.Status != workflow.StatusCompleted || wf.StopReason != workflow.StopLoop || wf.Step != 4 {
				t.Fatalf("ended %s/%s at step %d (%q), want completed/loop at step 4", wf.Status, wf.StopReason, wf.Step, wf.Error)
			}
			if n := len(reg.Calls()); n != 4 {
				t.Errorf("%s ran %d times, want 4 (the original and three repeats)", enginetest.Remote, n)
			}
			msgs := messages(t, store, wf.ID)
			if last := msgs[len(msgs)-1]; !strings.Contains(last.Text, "step 4 called "+enginetest.Remote+" with the same parameters as steps 1, 2 and 3") {
				t.Errorf("closing message = %q", last.Text)
			}
		})
	}
}
