package memstore

import "testing"

// TestSlabKeepsValuesInPlace keeps many values and checks every address
// still holds its own value, the blocks grow from 2 to maxSlabBlock, and a
// kept value is a copy.
func TestSlabKeepsValuesInPlace(t *testing.T) {
	var s slab[[3]int]
	var kept []*[3]int
	var caps []int
	for i := range 300 {
		v := [3]int{i, -i, 7}
		p := s.keep(&v)
		v[0] = -1 // the slot is a copy
		kept = append(kept, p)
		if c := cap(s.block); len(caps) == 0 || caps[len(caps)-1] != c {
			caps = append(caps, c)
		}
	}
	for i, p := range kept {
		if *p != [3]int{i, -i, 7} {
			t.Fatalf("value %d reads %v", i, *p)
		}
	}
	want := []int{2, 4, 8}
	for i, c := range caps {
		if i < len(want) && c != want[i] || i >= len(want) && c != maxSlabBlock {
			t.Fatalf("block sizes %v, want %v then %d", caps, want, maxSlabBlock)
		}
	}
}
