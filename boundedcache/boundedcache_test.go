package boundedcache

import (
	"fmt"
	"sync"
	"testing"
)

func TestGetPut(t *testing.T) {
	t.Parallel()
	c := New[string, int](4, 0)
	if _, ok := c.Get("a"); ok {
		t.Fatal("an empty cache has a")
	}
	c.Put("a", 1)
	c.Put("a", 2)
	if v, ok := c.Get("a"); !ok || v != 2 {
		t.Errorf("Get(a) = %d, %v, want 2, true", v, ok)
	}
	if v, ok := GetBytes(c, []byte("a")); !ok || v != 2 {
		t.Errorf("GetBytes(a) = %d, %v, want 2, true", v, ok)
	}
	if n := c.Len(); n != 1 {
		t.Errorf("Len = %d, want 1", n)
	}
}

// The cache never holds more than two generations of maxLen entries, and
// an entry read in every generation survives every turnover.
func TestBoundHoldsAndHotEntrySurvives(t *testing.T) {
	t.Parallel()
	const maxLen = 8
	c := New[string, int](maxLen, 0)
	c.Put("hot", -1)
	for i := range 1000 {
		c.Put(fmt.Sprint(i), i)
		if n := c.Len(); n > 2*maxLen {
			t.Fatalf("after %d puts: %d entries, over 2 × %d", i+1, n, maxLen)
		}
		if i%(maxLen/2) == 0 {
			if v, ok := c.Get("hot"); !ok || v != -1 {
				t.Fatalf("after %d puts: hot entry = %d, %v; want kept", i+1, v, ok)
			}
		}
	}
	if _, ok := c.Get("0"); ok {
		t.Error("the first cold entry is still held after 1000 puts")
	}
	if v, ok := GetBytes(c, []byte("999")); !ok || v != 999 {
		t.Errorf("newest entry = %d, %v, want 999, true", v, ok)
	}
}

// With a cost bound the generations turn over when the newer one's cost
// reaches it, and AddCost counts an entry's growth.
func TestCostBound(t *testing.T) {
	t.Parallel()
	c := New[int, string](1000, 10)
	for i := range 100 {
		c.Put(i, "v")
		c.AddCost(i, 3)
		if got := c.Cost(); got > 2*(10+3) {
			t.Fatalf("after %d puts: cost %d, over 2 × (10 + 3)", i+1, got)
		}
	}
	if n := c.Len(); n > 8 {
		t.Errorf("%d entries held under a cost bound of 10 at 3 each", n)
	}
	c.Put(-1, "grows")
	c.AddCost(-1, 50)
	c.AddCost(-2, 50) // not cached: nothing
	if got := c.Cost(); got < 50 || got > 2*(10+3)+50 {
		t.Errorf("cost after growing one entry by 50 = %d", got)
	}
	c.Put(-3, "next") // the grown generation is full: it turns over
	c.Put(-4, "next")
	if _, ok := c.Get(-1); ok {
		if _, ok := c.Get(-1); !ok {
			t.Error("a promoted entry is gone")
		}
	}
	c.Put(-5, "x")
	c.Put(-6, "x")
	if got := c.Cost(); got > 2*(10+3)+50 {
		t.Errorf("cost = %d after turnovers", got)
	}
}

// Concurrent readers and writers see only values that were put for the
// key they read, and the bound holds (run with -race).
func TestConcurrent(t *testing.T) {
	t.Parallel()
	const maxLen = 16
	c := New[string, string](maxLen, 0)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				k := fmt.Sprint((g*7 + i) % 50)
				if v, ok := c.Get(k); ok && v != "v"+k {
					t.Errorf("Get(%s) = %s", k, v)
					return
				}
				if v, ok := GetBytes(c, []byte(k)); ok && v != "v"+k {
					t.Errorf("GetBytes(%s) = %s", k, v)
					return
				}
				c.Put(k, "v"+k)
				if n := c.Len(); n > 2*maxLen {
					t.Errorf("%d entries, over 2 × %d", n, maxLen)
					return
				}
			}
		})
	}
	wg.Wait()
}

// A hit does not allocate, with the key given as a string or as bytes.
func TestHitDoesNotAllocate(t *testing.T) {
	c := New[string, int](4, 0)
	long := "a key longer than the thirty-two bytes a conversion may keep on the stack"
	c.Put(long, 1)
	key := []byte(long)
	if n := testing.AllocsPerRun(100, func() { GetBytes(c, key) }); n != 0 {
		t.Errorf("GetBytes allocates %v times per hit", n)
	}
	if n := testing.AllocsPerRun(100, func() { c.Get(long) }); n != 0 {
		t.Errorf("Get allocates %v times per hit", n)
	}
}
