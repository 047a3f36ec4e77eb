package changefeed

import (
	"sync"
	"testing"

	"github.com/twostep/twostep/workflow"
)

// TestFeed: a change reaches every subscriber of its workflow and no
// other; changes published while one is pending coalesce into the latest;
// a cancelled subscription is forgotten.
func TestFeed(t *testing.T) {
	t.Parallel()
	f := New()
	f.Publish(workflow.Change{WorkflowID: "a"}) // nobody subscribes: nothing happens
	a1, cancelA1 := f.Subscribe("a")
	a2, cancelA2 := f.Subscribe("a")
	b, cancelB := f.Subscribe("b")
	f.Publish(workflow.Change{WorkflowID: "a"})
	f.Publish(workflow.Change{WorkflowID: "a"})
	for i, ch := range []<-chan workflow.Change{a1, a2} {
		select {
		case c := <-ch:
			if c.WorkflowID != "a" {
				t.Errorf("subscriber %d of a got a change of %q", i+1, c.WorkflowID)
			}
		default:
			t.Errorf("subscriber %d of a got nothing", i+1)
		}
		select {
		case <-ch:
			t.Errorf("subscriber %d of a got two changes for changes that coalesce", i+1)
		default:
		}
	}
	select {
	case <-b:
		t.Error("a's change reached b's subscriber")
	default:
	}
	cancelA1()
	cancelA1() // a second cancel does nothing
	f.Publish(workflow.Change{WorkflowID: "a"})
	select {
	case <-a1:
		t.Error("a cancelled subscriber got a change")
	default:
	}
	select {
	case <-a2:
	default:
		t.Error("a's other subscriber got nothing after the first cancelled")
	}
	cancelA2()
	cancelB()
	if n := f.open.Load(); n != 0 || len(f.by) != 0 {
		t.Errorf("after every cancel: %d open, %d workflows kept", n, len(f.by))
	}
}

// TestFeedKeepsARoundsEnd: a plain change published after a round's end
// that is still pending keeps the end (and its messages); a later end
// replaces it.
func TestFeedKeepsARoundsEnd(t *testing.T) {
	t.Parallel()
	f := New()
	ch, cancel := f.Subscribe("a")
	defer cancel()
	ended := &workflow.Workflow{ID: "a", Round: 1, Status: workflow.StatusCompleted}
	msgs := []workflow.Message{{ID: "m1"}}
	f.Publish(workflow.Change{WorkflowID: "a", Ended: ended, Messages: msgs})
	f.Publish(workflow.Change{WorkflowID: "a"})
	if c := <-ch; c.Ended != ended || len(c.Messages) != 1 || &c.Messages[0] != &msgs[0] {
		t.Fatalf("got %+v, want the pending end with its messages", c)
	}
	later := &workflow.Workflow{ID: "a", Round: 2, Status: workflow.StatusFailed}
	f.Publish(workflow.Change{WorkflowID: "a", Ended: ended, Messages: msgs})
	f.Publish(workflow.Change{WorkflowID: "a", Ended: later})
	if c := <-ch; c.Ended != later || c.Messages != nil {
		t.Fatalf("got %+v, want the later end alone", c)
	}
}

// TestFeedConcurrent: publishers and subscribers on many goroutines never
// block one another (run with -race).
func TestFeedConcurrent(t *testing.T) {
	t.Parallel()
	f := New()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 200 {
				ch, cancel := f.Subscribe("a")
				f.Publish(workflow.Change{WorkflowID: "a"})
				<-ch // its own change, or a newer one
				cancel()
			}
		})
	}
	wg.Wait()
	if n := f.open.Load(); n != 0 || len(f.by) != 0 {
		t.Errorf("%d open, %d workflows kept", n, len(f.by))
	}
}
