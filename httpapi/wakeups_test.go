package httpapi

import "testing"

// TestWakeups: a wake reaches every watcher of its workflow and no other;
// wakes while one is pending coalesce into one; a stopped watcher is
// forgotten.
func TestWakeups(t *testing.T) {
	t.Parallel()
	var w wakeups
	w.wake("a") // nobody watches: nothing happens
	a1, stopA1 := w.watch("a")
	a2, stopA2 := w.watch("a")
	b, stopB := w.watch("b")
	w.wake("a")
	w.wake("a")
	for i, ch := range []<-chan struct{}{a1, a2} {
		select {
		case <-ch:
		default:
			t.Errorf("watcher %d of a was not woken", i+1)
		}
		select {
		case <-ch:
			t.Errorf("watcher %d of a got two wake-ups for wakes that coalesce", i+1)
		default:
		}
	}
	select {
	case <-b:
		t.Error("a's wake reached b's watcher")
	default:
	}
	stopA1()
	w.wake("a")
	select {
	case <-a1:
		t.Error("a stopped watcher was woken")
	default:
	}
	select {
	case <-a2:
	default:
		t.Error("a's other watcher was not woken after the first stopped")
	}
	stopA2()
	stopB()
	if n := w.open.Load(); n != 0 || len(w.by) != 0 {
		t.Errorf("after every stop: %d open, %d workflows kept", n, len(w.by))
	}
}
