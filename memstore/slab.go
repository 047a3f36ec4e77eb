package memstore

// slab keeps the values of one kind a record stores (its messages, its
// traces) in blocks of 2, 4, then maxSlabBlock values: keeping a value
// costs no allocation of its own, and the record's list of them grows by
// copying pointers. A block never moves, so a kept value's address stays
// valid; the caller writes nothing to a slot after keep returns it.
type slab[T any] struct{ block []T }

// maxSlabBlock bounds a block: a record's last block holds fewer than
// that many values unused, and a record keeps fewer than that many
// dropped traces alive beside the ones it holds.
const maxSlabBlock = 8

// keep copies v into a free slot and returns its address.
func (s *slab[T]) keep(v *T) *T {
	if len(s.block) == cap(s.block) {
		s.block = make([]T, 0, min(max(2*cap(s.block), 2), maxSlabBlock))
	}
	s.block = append(s.block, *v)
	return &s.block[len(s.block)-1]
}
