package placeholders

import (
	"cmp"
	"slices"

	"github.com/twostep/twostep/workflow"
)

// view is the history's entries among a workflow's messages: the newest
// summary (nil: none) and the messages that are entries, newest first,
// as indexes into msgs. It copies no message.
type view struct {
	msgs  []workflow.Message
	prev  *workflow.Message
	order ordering
	// prevAt is prev's index in msgs (-1: none), for callers that return
	// prev without letting the view's index list escape with it.
	prevAt int
}

// at returns the k-th entry, newest first.
func (v view) at(k int) *workflow.Message { return &v.msgs[v.order.At(k)] }

// viewOf returns the history view of msgs: without a summary every
// message is an entry; with one, the newest summary (by seq) is prev and
// the entries are the messages that are not summaries, after the ones prev
// covers (Seq > prev.CompactedThrough). Entries are ordered by round, then
// seq, both descending (equal keys: later in the slice first). buf is the
// room for the index list, which the common case (messages in seq order
// from a store, no summary) does not need.
func viewOf(msgs []workflow.Message, buf []int) view {
	v := view{msgs: msgs, prevAt: -1}
	sorted := true
	for i := range msgs {
		m := &msgs[i]
		if m.Role == workflow.RoleSummary && (v.prev == nil || m.Seq >= v.prev.Seq) {
			v.prev, v.prevAt = m, i
		}
		if i > 0 && (m.Round < msgs[i-1].Round || m.Round == msgs[i-1].Round && m.Seq < msgs[i-1].Seq) {
			sorted = false
		}
	}
	if v.prev == nil && sorted {
		v.order = ordering{n: len(msgs)}
		return v
	}
	idx := buf[:0]
	for i := len(msgs) - 1; i >= 0; i-- {
		if v.prev == nil || v.isEntry(&msgs[i]) {
			idx = append(idx, i)
		}
	}
	if !sorted {
		slices.SortStableFunc(idx, func(a, b int) int {
			if c := cmp.Compare(msgs[b].Round, msgs[a].Round); c != 0 {
				return c
			}
			return cmp.Compare(msgs[b].Seq, msgs[a].Seq)
		})
	}
	v.order = ordering{n: len(idx), idx: idx}
	return v
}

// isEntry reports whether m is a history entry of a view with a summary.
func (v view) isEntry(m *workflow.Message) bool {
	return m.Role != workflow.RoleSummary && m.Seq > v.prev.CompactedThrough
}

// ordering is an order of a message slice's indexes: the reverse of the
// slice when idx is nil, else idx.
type ordering struct {
	n   int
	idx []int
}

// Len is the number of indexes.
func (o ordering) Len() int { return o.n }

// At returns the k-th index.
func (o ordering) At(k int) int {
	if o.idx == nil {
		return o.n - 1 - k
	}
	return o.idx[k]
}
