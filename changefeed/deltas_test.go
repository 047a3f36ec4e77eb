package changefeed

import (
	"testing"

	"github.com/twostep/twostep/workflow"
)

// TestDeltaFeed: a delta reaches every subscriber of its workflow, in
// order, and no other; a full buffer loses the newest delta without
// blocking the publisher; watch hears the first subscription and the end
// of the last; a cancelled subscription is forgotten.
func TestDeltaFeed(t *testing.T) {
	t.Parallel()
	var watched []string
	f := NewDeltasWatched(func(id string, on bool) {
		if on {
			watched = append(watched, "+"+id)
		} else {
			watched = append(watched, "-"+id)
		}
	})
	f.PublishDelta(workflow.Delta{WorkflowID: "a", Text: "nobody"})
	a1, cancelA1 := f.SubscribeDeltas("a")
	a2, cancelA2 := f.SubscribeDeltas("a")
	b, cancelB := f.SubscribeDeltas("b")
	for _, text := range []string{"Hel", "lo"} {
		f.PublishDelta(workflow.Delta{WorkflowID: "a", Field: "message", Text: text})
	}
	for i, ch := range []<-chan workflow.Delta{a1, a2} {
		if got := (<-ch).Text + (<-ch).Text; got != "Hello" {
			t.Errorf("subscriber %d of a read %q, want Hello in order", i+1, got)
		}
	}
	select {
	case d := <-b:
		t.Errorf("a's delta %q reached b", d.Text)
	default:
	}
	// A reader that does not read loses what overflows, never blocks.
	for range DeltaBuffer + 10 {
		f.PublishDelta(workflow.Delta{WorkflowID: "b", Text: "x"})
	}
	if len(b) != DeltaBuffer || f.Lost() != 10 {
		t.Errorf("after %d deltas to an unread subscription: %d buffered, %d lost; want %d and 10", DeltaBuffer+10, len(b), f.Lost(), DeltaBuffer)
	}
	cancelA1()
	cancelA1()
	if !f.Watched("a") {
		t.Error("a is not watched while a2 subscribes")
	}
	cancelA2()
	cancelB()
	if f.Watched("a") || f.Watched("b") || f.open.Load() != 0 {
		t.Errorf("cancelled subscriptions remain: a %v, b %v, open %d", f.Watched("a"), f.Watched("b"), f.open.Load())
	}
	want := []string{"+a", "+b", "-a", "-b"}
	if len(watched) != len(want) {
		t.Fatalf("watch heard %v, want %v", watched, want)
	}
	for i := range want {
		if watched[i] != want[i] {
			t.Fatalf("watch heard %v, want %v", watched, want)
		}
	}
}
