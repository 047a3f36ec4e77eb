package workflow

import (
	"bytes"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
)

func TestULIDSourceIncreases(t *testing.T) {
	t0 := time.UnixMilli(1_700_000_000_000)
	var s ulidSource
	first := s.next(t0)
	if first.Time() != ulid.Timestamp(t0) {
		t.Fatalf("first id's time %d, want %d", first.Time(), ulid.Timestamp(t0))
	}
	prev := first
	for i, now := range []time.Time{t0, t0, t0.Add(-time.Hour), t0.Add(999 * time.Microsecond), t0.Add(time.Millisecond), t0.Add(time.Millisecond)} {
		id := s.next(now)
		if bytes.Compare(id[:], prev[:]) <= 0 {
			t.Fatalf("id %d %s after %s: want it greater", i, id, prev)
		}
		wantMs := max(ulid.Timestamp(now), prev.Time())
		if id.Time() != wantMs {
			t.Errorf("id %d at %v: time %d, want %d", i, now, id.Time(), wantMs)
		}
		if id.Time() == prev.Time() {
			if inc := entropy(id) - entropy(prev); inc < 1 || inc >= math.MaxUint32 {
				t.Errorf("id %d: increment %d, want one in [1, 2^32)", i, inc)
			}
		}
		prev = id
	}
}

// entropy is the low 64 bits of id's entropy (the test's increments do not
// carry into the top 16).
func entropy(id ulid.ULID) uint64 {
	var e uint64
	for _, b := range id[8:] {
		e = e<<8 | uint64(b)
	}
	return e
}

func TestULIDSourceOverflowMovesToTheNextMillisecond(t *testing.T) {
	t0 := time.UnixMilli(1_700_000_000_000)
	draws := []uint64{math.MaxUint64, math.MaxUint64, math.MaxUint64, 0, 7, 5}
	s := ulidSource{rand: func() uint64 { r := draws[0]; draws = draws[1:]; return r }}
	first := s.next(t0) // entropy: all ones
	id := s.next(t0)    // + 1 + (2^64-1) mod (2^32-1) overflows the 80 bits: entropy 0:7
	if id.Time() != first.Time()+1 || bytes.Compare(id[:], first[:]) <= 0 || entropy(id) != 7 {
		t.Errorf("after an overflow: %s (time %d) after %s (time %d), want entropy 7 in the next millisecond", id, id.Time(), first, first.Time())
	}
	if next := s.next(t0); next.Time() != id.Time() || entropy(next) != 7+1+5 {
		t.Errorf("the id after: %s (time %d), want entropy 13 in millisecond %d", next, next.Time(), id.Time())
	}
}

func TestULIDSourceConcurrentIDsAreUnique(t *testing.T) {
	var s ulidSource
	const workers, each = 4, 2000
	got := make([][]ulid.ULID, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for range each {
				got[w] = append(got[w], s.next(time.Now()))
			}
		})
	}
	wg.Wait()
	seen := make(map[ulid.ULID]bool, workers*each)
	for _, ids := range got {
		for i, id := range ids {
			if seen[id] {
				t.Fatalf("id %s made twice", id)
			}
			seen[id] = true
			if i > 0 && bytes.Compare(id[:], ids[i-1][:]) <= 0 {
				t.Fatalf("one goroutine's ids went down: %s after %s", id, ids[i-1])
			}
		}
	}
}
