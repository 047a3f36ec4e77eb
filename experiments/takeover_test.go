package experiments_test

import (
	"context"
	"testing"
	"time"

	"github.com/twostep/twostep/experiments"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/workflow"
)

// An experiment whose instance stops mid-way (its model hangs, then the
// instance closes without releasing the lease) is finished by another
// instance once the lease expires, re-running only the calls not stored.
func TestAnotherInstanceFinishesAnExperiment(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	fill := filler()
	hanging := &scripted.Model{Model: "filler", Reply: func(n int, req workflow.ModelRequest) (string, error) {
		if n >= 4 {
			return "", scripted.ErrBlock
		}
		return fill.Reply(n, req)
	}}
	a := w.runner(t, hanging, "a")
	e, err := a.Start(context.Background(), experiments.Spec{Stage: workflow.StageTwo})
	if err != nil {
		t.Fatal(err)
	}
	for len(hanging.Calls()) < 4+3 { // four answered, three hanging
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(600 * time.Millisecond) // a progress save (every 500 ms)
	for _, step := range []struct {
		name string
		do   func()
	}{{"while it runs", func() {}}, {"after it closed", a.Close}} {
		name := step.name
		step.do()
		stored, err := a.Get(context.Background(), e.ID)
		if err != nil {
			t.Fatal(err)
		}
		if stored.Status != experiments.StatusRunning || len(stored.Calls) != 4 {
			t.Fatalf("%s: %s with %d calls stored, want running with 4", name, stored.Status, len(stored.Calls))
		}
	}
	b := w.runner(t, fill, "b")
	if n, err := b.Recover(context.Background()); err != nil || n != 0 {
		t.Fatalf("Recover took %d experiments (%v) while the first lease runs", n, err)
	}
	time.Sleep(350 * time.Millisecond) // the lease (300 ms) expires
	if n, err := b.Recover(context.Background()); err != nil || n != 1 {
		t.Fatalf("Recover took %d experiments (%v), want 1", n, err)
	}
	done := finish(t, b, e.ID)
	if done.Status != experiments.StatusCompleted || done.Totals.Calls != 10 || done.Totals.Agreed != 10 {
		t.Fatalf("%s: %d calls, %d agree (%s)", done.Status, done.Totals.Calls, done.Totals.Agreed, done.Error)
	}
	if n := len(fill.Calls()); n != 6 {
		t.Errorf("the second instance made %d calls, want the 6 not stored", n)
	}
}

// Stop on the instance running an experiment cancels its calls in flight
// and answers with the experiment stored stopped, the calls done kept.
func TestStopHere(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	fill := filler()
	hanging := &scripted.Model{Model: "filler", Reply: func(n int, req workflow.ModelRequest) (string, error) {
		if n >= 2 {
			return "", scripted.ErrBlock
		}
		return fill.Reply(n, req)
	}}
	r := w.runner(t, hanging, "a")
	e, err := r.Start(context.Background(), experiments.Spec{Stage: workflow.StageOne})
	if err != nil {
		t.Fatal(err)
	}
	for len(hanging.Calls()) < 2+3 {
		time.Sleep(5 * time.Millisecond)
	}
	stopped, err := r.Stop(context.Background(), e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if stopped.Status != experiments.StatusStopped || len(stopped.Calls) < 2 {
		t.Fatalf("Stop answered %s with %d calls, want stopped with the 2 done", stopped.Status, len(stopped.Calls))
	}
	if again, err := r.Stop(context.Background(), e.ID); err != nil || again.Status != experiments.StatusStopped {
		t.Errorf("a second Stop: %v, %v", again, err)
	}
}
