// Package dispatchtest is the conformance suite every workflow.Dispatcher
// passes: the in-process one and the Redis Streams one run the same
// tests, so the runner can rely on one behaviour.
package dispatchtest

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twostep/twostep/workflow"
)

// Run runs the suite. newDispatcher returns an empty dispatcher of its own
// (nothing queued or pending), made fresh for each subtest.
func Run(t *testing.T, newDispatcher func(t *testing.T) workflow.Dispatcher) {
	t.Run("each entry goes to one consumer", func(t *testing.T) { oneConsumerEach(t, newDispatcher(t)) })
	t.Run("receive waits and returns empty", func(t *testing.T) { receiveEmpty(t, newDispatcher(t)) })
	t.Run("acked entries are not reclaimed", func(t *testing.T) { ackedStay(t, newDispatcher(t)) })
	t.Run("a dead consumer's entry is reclaimed", func(t *testing.T) { reclaimDead(t, newDispatcher(t)) })
	t.Run("reclaim takes at most max", func(t *testing.T) { reclaimMax(t, newDispatcher(t)) })
	t.Run("touched entries are not reclaimed", func(t *testing.T) { touchedStay(t, newDispatcher(t)) })
	t.Run("requeue offers the round again", func(t *testing.T) { requeue(t, newDispatcher(t)) })
}

// receiveAll receives from every partition until n entries came.
func receiveAll(t *testing.T, d workflow.Dispatcher, consumer string, n int) []workflow.Delivery {
	t.Helper()
	ctx := context.Background()
	var out []workflow.Delivery
	deadline := time.Now().Add(10 * time.Second)
	for len(out) < n {
		for p := range d.Partitions() {
			got, ok, err := d.Receive(ctx, consumer, p)
			if err != nil {
				t.Fatalf("Receive(%d): %v", p, err)
			}
			if ok {
				if got.Partition != p || got.Ref == "" || got.WorkflowID == "" {
					t.Fatalf("delivery from partition %d: %+v", p, got)
				}
				out = append(out, got)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("received %d of %d entries", len(out), n)
		}
	}
	return out
}

func ids(ds []workflow.Delivery) []string {
	out := make([]string, 0, len(ds))
	for _, d := range ds {
		out = append(out, d.WorkflowID)
	}
	slices.Sort(out)
	return out
}

func enqueue(t *testing.T, d workflow.Dispatcher, n int) []string {
	t.Helper()
	var want []string
	for range n {
		id := workflow.NewID(workflow.PrefixWorkflow)
		if err := d.Enqueue(context.Background(), id); err != nil {
			t.Fatalf("Enqueue: %v", err)
		}
		want = append(want, id)
	}
	slices.Sort(want)
	return want
}

// 12 entries received by 3 concurrent consumers: each exactly once.
func oneConsumerEach(t *testing.T, d workflow.Dispatcher) {
	want := enqueue(t, d, 12)
	var (
		mu  sync.Mutex
		got []workflow.Delivery
		wg  sync.WaitGroup
	)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for c := range 3 {
		wg.Go(func() {
			for ctx.Err() == nil {
				mu.Lock()
				done := len(got) >= len(want)
				mu.Unlock()
				if done {
					return
				}
				for p := range d.Partitions() {
					dl, ok, err := d.Receive(ctx, []string{"c1", "c2", "c3"}[c], p)
					if err != nil && ctx.Err() == nil {
						t.Errorf("Receive: %v", err)
						return
					}
					if ok {
						mu.Lock()
						got = append(got, dl)
						mu.Unlock()
					}
				}
			}
		})
	}
	wg.Wait()
	if g := ids(got); !slices.Equal(g, want) {
		t.Fatalf("received %v, want each of %v once", g, want)
	}
}

func receiveEmpty(t *testing.T, d workflow.Dispatcher) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, ok, err := d.Receive(ctx, "c1", 0)
	if ok || err != nil {
		t.Fatalf("Receive on an empty dispatcher: %+v, %v, %v; want nothing", got, ok, err)
	}
	if _, _, err := d.Receive(ctx, "c1", d.Partitions()); err == nil {
		t.Errorf("Receive from partition %d of %d: no error", d.Partitions(), d.Partitions())
	}
}

func ackedStay(t *testing.T, d workflow.Dispatcher) {
	ctx := context.Background()
	enqueue(t, d, 2)
	got := receiveAll(t, d, "c1", 2)
	for _, dl := range got {
		if err := d.Ack(ctx, dl); err != nil {
			t.Fatalf("Ack: %v", err)
		}
	}
	time.Sleep(20 * time.Millisecond)
	back, err := d.Reclaim(ctx, "c2", 10*time.Millisecond, 10)
	if err != nil || len(back) != 0 {
		t.Fatalf("Reclaim after acks: %+v, %v; want nothing", back, err)
	}
}

// An entry received by c1 and never acked nor touched goes to c2 once it
// has idled long enough, marked Reclaimed, and only then.
func reclaimDead(t *testing.T, d workflow.Dispatcher) {
	ctx := context.Background()
	want := enqueue(t, d, 1)
	got := receiveAll(t, d, "dead", 1)
	received := time.Now() // the entry has idled at least since then
	if early, err := d.Reclaim(ctx, "c2", time.Hour, 10); err != nil || len(early) != 0 {
		t.Fatalf("Reclaim before the entry idled: %+v, %v", early, err)
	}
	time.Sleep(60 * time.Millisecond)
	back, err := d.Reclaim(ctx, "c2", 50*time.Millisecond, 10)
	if err != nil || len(back) != 1 || back[0].WorkflowID != want[0] || !back[0].Reclaimed || back[0].Ref != got[0].Ref || back[0].From != "dead" {
		t.Fatalf("Reclaim: %+v, %v; want %s's entry %s, reclaimed from dead", back, err, want[0], got[0].Ref)
	}
	// Had c2's claim not reset the entry's idle time, it would have idled
	// since received; a minimum of that long takes it only if the claim
	// did not count (a fixed minimum could pass under load).
	if again, err := d.Reclaim(ctx, "c3", time.Since(received), 10); err != nil || len(again) != 0 {
		t.Fatalf("a second Reclaim at once: %+v, %v; want nothing (c2 just took it)", again, err)
	}
	if err := d.Ack(ctx, back[0]); err != nil {
		t.Fatal(err)
	}
}

// Of three idle entries, a Reclaim with max 1 takes one; the other two
// stay pending for the next consumer's Reclaim (none is lost or requeued
// as a new entry).
func reclaimMax(t *testing.T, d workflow.Dispatcher) {
	ctx := context.Background()
	want := enqueue(t, d, 3)
	got := receiveAll(t, d, "dead", 3)
	time.Sleep(60 * time.Millisecond)
	first, err := d.Reclaim(ctx, "c2", 50*time.Millisecond, 1)
	if err != nil || len(first) != 1 {
		t.Fatalf("Reclaim with max 1: %+v, %v; want one entry", first, err)
	}
	rest, err := d.Reclaim(ctx, "c3", 50*time.Millisecond, 10)
	if err != nil || len(rest) != 2 {
		t.Fatalf("Reclaim of the rest: %+v, %v; want the other two entries, still pending", rest, err)
	}
	all := append(first, rest...)
	if g := ids(all); !slices.Equal(g, want) {
		t.Errorf("reclaimed %v, want %v", g, want)
	}
	refs := map[string]bool{}
	for _, dl := range got {
		refs[dl.Ref] = true
	}
	for _, dl := range all {
		if !refs[dl.Ref] || !dl.Reclaimed || dl.From != "dead" {
			t.Errorf("reclaimed %+v: want one of dead's own entries, marked reclaimed from dead", dl)
		}
		if err := d.Ack(ctx, dl); err != nil {
			t.Fatal(err)
		}
	}
	for p := range d.Partitions() {
		if dl, ok, err := d.Receive(ctx, "c4", p); ok || err != nil {
			t.Errorf("partition %d delivers %+v, %v after every entry was reclaimed and acked; want nothing (no requeued copy)", p, dl, err)
		}
	}
}

func touchedStay(t *testing.T, d workflow.Dispatcher) {
	ctx := context.Background()
	enqueue(t, d, 1)
	got := receiveAll(t, d, "c1", 1)
	// 8 × 60 ms: an untouched entry would be idle past 300 ms by the
	// sixth Reclaim; a touched one only if a Reclaim came 240 ms late.
	for range 8 {
		time.Sleep(60 * time.Millisecond)
		if err := d.Touch(ctx, "c1", got[0]); err != nil {
			t.Fatalf("Touch: %v", err)
		}
		if back, err := d.Reclaim(ctx, "c2", 300*time.Millisecond, 10); err != nil || len(back) != 0 {
			t.Fatalf("Reclaim of a touched entry: %+v, %v; want nothing", back, err)
		}
	}
}

// Requeue acks the entry and offers the round again, keeping Reclaimed.
func requeue(t *testing.T, d workflow.Dispatcher) {
	ctx := context.Background()
	want := enqueue(t, d, 1)
	got := receiveAll(t, d, "c1", 1)[0]
	got.Reclaimed = true
	if err := d.Requeue(ctx, got); err != nil {
		t.Fatalf("Requeue: %v", err)
	}
	again := receiveAll(t, d, "c2", 1)[0]
	if again.WorkflowID != want[0] || again.Ref == got.Ref || !again.Reclaimed {
		t.Fatalf("after Requeue: %+v; want a new entry of %s, reclaimed", again, want[0])
	}
	time.Sleep(30 * time.Millisecond)
	back, err := d.Reclaim(ctx, "c3", 20*time.Millisecond, 10)
	if err != nil || len(back) != 1 || back[0].Ref != again.Ref {
		t.Fatalf("Reclaim after Requeue: %+v, %v; want only the new entry (the old one was acked)", back, err)
	}
}
