package workflow

// LoopIndex gives a Run the answers of Repeats without comparing the round's
// newest action step with every earlier one, which made loop detection
// O(steps) per step, twice (the engine after each step, Stage 1 before
// each render): 100 steps into a round it was the engine's largest cost
// that grows with the round. Each committed action message of the round
// is indexed once, by what sameOutcome compares exactly when no NUL byte
// is involved — action, status, result text, number of documents — so
// the newest step meets only the earlier steps that agree on all of it;
// repeated then decides for each as repeats does. Messages holding a NUL
// (where sameOutcome is not exact and fields may shift into one another)
// are kept aside and always compared, and a newest message holding one
// takes the full scan. The answers are repeats' exactly
// (TestRepeatsMatchesFingerprints holds both to the fingerprints).
type LoopIndex struct {
	round int
	// indexed is how many of the run's messages are indexed; last is the
	// index of the newest action message of the round among them (-1:
	// none).
	indexed, last int
	// by lists the indices of the NUL-free action messages of the round
	// by outcome, ascending; odd those holding a NUL.
	by  map[outcomeKey][]int
	odd []int
}

// outcomeKey is what two NUL-free action messages share when they have
// the same fingerprint (but for the parameters and the documents' names,
// types and sizes, which repeated compares).
type outcomeKey struct {
	action, text string
	status       MessageStatus
	docs         int
}

func keyOf(m *Message) outcomeKey {
	return outcomeKey{action: m.Action, text: m.Text, status: m.Status, docs: len(m.Documents)}
}

// update indexes the messages of msgs not indexed yet. msgs is the run's
// list, which only grows while the round runs; a shorter list or another
// round starts the index again.
func (x *LoopIndex) update(msgs []Message, round int) {
	if x.by == nil || x.round != round || x.indexed > len(msgs) {
		*x = LoopIndex{round: round, last: -1, by: make(map[outcomeKey][]int)}
	}
	for i := x.indexed; i < len(msgs); i++ {
		m := &msgs[i]
		if m.Round != round || m.Role != RoleAction {
			continue
		}
		x.last = i
		if hasNUL(m) {
			x.odd = append(x.odd, i)
			continue
		}
		k := keyOf(m)
		x.by[k] = append(x.by[k], i)
	}
	x.indexed = len(msgs)
}

// Repeats is the package function Repeats over head then tail, for head
// the run's messages (indexed incrementally: head only ever grows).
func (x *LoopIndex) Repeats(head, tail []Message, round int) (newest Message, earlier []int, ok bool) {
	x.update(head, round)
	var n *Message
	ti := len(tail) - 1
	for ; ti >= 0; ti-- {
		if m := &tail[ti]; m.Round == round && m.Role == RoleAction {
			n = m
			break
		}
	}
	end := len(head) // the head messages before the newest
	if n == nil {
		if x.last < 0 {
			return Message{}, nil, false
		}
		n, end, ti = &head[x.last], x.last, 0
	}
	nNUL := hasNUL(n)
	if nNUL {
		return repeats(head, tail, round)
	}
	var params []byte
	same := x.by[keyOf(n)]
	for i, k := 0, 0; ; {
		// The indexed candidates and the odd ones, merged in order.
		j := -1
		switch {
		case i < len(same) && same[i] < end && (k >= len(x.odd) || same[i] < x.odd[k]):
			j, i = same[i], i+1
		case k < len(x.odd) && x.odd[k] < end:
			j, k = x.odd[k], k+1
		}
		if j < 0 {
			break
		}
		if m := &head[j]; repeated(n, m, nNUL, &params) {
			earlier = append(earlier, m.Step)
		}
	}
	for j := range ti { // the pending messages before the newest
		if m := &tail[j]; m.Round == round && m.Role == RoleAction && repeated(n, m, nNUL, &params) {
			earlier = append(earlier, m.Step)
		}
	}
	return *n, earlier, true
}
