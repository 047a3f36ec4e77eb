package workflow

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// naiveRepeats is Repeats as it was first written: the fingerprint of
// every earlier action message of the round compared with the newest's.
// repeats must give exactly its results.
func naiveRepeats(msgs []Message, round int) (Message, []int, bool) {
	i := len(msgs) - 1
	for ; i >= 0; i-- {
		if msgs[i].Round == round && msgs[i].Role == RoleAction {
			break
		}
	}
	if i < 0 {
		return Message{}, nil, false
	}
	fp := Fingerprint(msgs[i])
	var earlier []int
	for _, m := range msgs[:i] {
		if m.Round == round && m.Role == RoleAction && m.Action == msgs[i].Action && Fingerprint(m) == fp {
			earlier = append(earlier, m.Step)
		}
	}
	return msgs[i], earlier, true
}

// TestRepeatsMatchesFingerprints: on random histories whose steps often
// share actions, results, documents and parameters (equal as JSON but
// not as Go values: 1 and 1.0, reordered keys) and whose texts, statuses
// and document names hold NUL bytes that shift fields into one another
// in the fingerprint's input, repeats — whole or split into committed and
// pending messages — finds exactly the steps the fingerprints find.
func TestRepeatsMatchesFingerprints(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(20, 11))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	params := []map[string]any{
		nil, {}, {"id": 1}, {"id": 1.0}, {"id": 2}, {"id": 1, "q": "a"}, {"q": "a", "id": 1.0},
		{"q": "a\x00b"}, {"list": []any{"x", 1}},
	}
	docs := [][]Document{
		nil, {}, {{Name: "a", MimeType: "text/plain", Size: 1}}, {{Name: "a", MimeType: "text/plain", Size: 2}},
		{{Name: "a\x00text/plain\x001", MimeType: "x", Size: 3}},
		{{Name: "a", MimeType: "text/plain", Size: 1}, {Name: "b", MimeType: "text/plain", Size: 1}},
	}
	matches := 0
	for trial := range 3000 {
		n := 1 + rng.IntN(12)
		msgs := make([]Message, n)
		for k := range msgs {
			m := Message{Round: 1 + rng.IntN(2), Step: k + 1, Role: RoleAction, Action: pick("a", "b"),
				Parameters: params[rng.IntN(len(params))], Status: MessageStatus(pick(string(MessageSuccess), string(MessageError), "x\x00")),
				Text:      pick("ok", "ok\x00", "", "\x00", "ok\x00a\x00text/plain\x001"),
				Documents: docs[rng.IntN(len(docs))]}
			if k > 0 && rng.IntN(2) == 0 { // a repeat of an earlier step, perhaps in one field only
				prev := msgs[rng.IntN(k)]
				switch rng.IntN(4) {
				case 0:
					prev.Parameters = m.Parameters
				case 1:
					prev.Text = m.Text
				case 2:
					prev.Documents = m.Documents
				}
				prev.Step = m.Step
				m = prev
			}
			if rng.IntN(8) == 0 {
				m.Role = RoleAssistant
			}
			msgs[k] = m
		}
		round := 1 + rng.IntN(2)
		wantNewest, want, wantOK := naiveRepeats(msgs, round)
		matches += len(want)
		for split := 0; split <= n; split++ {
			newest, got, ok := repeats(msgs[:split], msgs[split:], round)
			if ok != wantOK || newest.Step != wantNewest.Step || !slices.Equal(got, want) {
				t.Fatalf("trial %d, split %d: repeats = step %d, %v, %v; fingerprints give step %d, %v, %v\n%s",
					trial, split, newest.Step, got, ok, wantNewest.Step, want, wantOK, fmt.Sprintf("%+v", msgs))
			}
			// The Run's index, grown as a run's messages grow (asked at
			// every length, sometimes about the other round first).
			var x LoopIndex
			for h := range split {
				x.Repeats(msgs[:h], nil, round)
				if rng.IntN(8) == 0 {
					x.Repeats(msgs[:h], nil, 3-round)
				}
			}
			newest, got, ok = x.Repeats(msgs[:split], msgs[split:], round)
			if ok != wantOK || newest.Step != wantNewest.Step || !slices.Equal(got, want) {
				t.Fatalf("trial %d, split %d: the index's repeats = step %d, %v, %v; fingerprints give step %d, %v, %v\n%s",
					trial, split, newest.Step, got, ok, wantNewest.Step, want, wantOK, fmt.Sprintf("%+v", msgs))
			}
		}
		// Asked about a shorter list than it indexed, the index starts again.
		var x LoopIndex
		x.Repeats(msgs, nil, round)
		for h := n; h >= 0; h-- {
			wn, w, wok := naiveRepeats(msgs[:h], round)
			if gn, g, gok := x.Repeats(msgs[:h], nil, round); gok != wok || gn.Step != wn.Step || !slices.Equal(g, w) {
				t.Fatalf("trial %d, prefix %d after the whole list: the index's repeats = step %d, %v; want step %d, %v",
					trial, h, gn.Step, g, wn.Step, w)
			}
		}
		if wantEnd, gotEnd := loopEnd(msgs, round, 2), loopEndOf(msgs[:n/2], msgs[n/2:], round, 2); gotEnd != wantEnd {
			t.Fatalf("trial %d: loopEndOf = %q, loopEnd = %q", trial, gotEnd, wantEnd)
		}
	}
	if matches < 200 {
		t.Fatalf("only %d repeats in all trials: the test does not exercise matching steps", matches)
	}

	// The fingerprint's input does not tell a NUL in the text from the
	// separator before a document: these two steps hash alike, so they
	// repeat each other, and repeats must say so too.
	shifted := []Message{
		{Round: 1, Step: 1, Role: RoleAction, Action: "a", Status: MessageSuccess, Text: "ok\x00a\x00text/plain\x001"},
		{Round: 1, Step: 2, Role: RoleAction, Action: "a", Status: MessageSuccess, Text: "ok",
			Documents: []Document{{Name: "a", MimeType: "text/plain", Size: 1}}},
	}
	if _, got, _ := repeats(shifted[:1], shifted[1:], 1); !slices.Equal(got, []int{1}) {
		t.Errorf("steps with the same fingerprint through a NUL in the text: repeats = %v, want [1]", got)
	}
}

// BenchmarkRepeats: the newest of a round of 100 echo steps (each result
// different) against the earlier ones, as the engine does after every
// step and Stage 1 before every render; "fingerprints" is the first
// version, hashing every earlier step each time.
func BenchmarkRepeats(b *testing.B) {
	msgs := make([]Message, 100)
	for k := range msgs {
		msgs[k] = Message{Round: 1, Step: k + 1, Role: RoleAction, Action: "echo", Status: MessageSuccess,
			Parameters: map[string]any{"text": fmt.Sprintf("call %d", k)}, Text: fmt.Sprintf("call %d", k)}
	}
	b.Run("fingerprints", func(b *testing.B) {
		for b.Loop() {
			naiveRepeats(msgs, 1)
		}
	})
	b.Run("incremental", func(b *testing.B) {
		for b.Loop() {
			Repeats(msgs, 1)
		}
	})
	b.Run("index", func(b *testing.B) {
		var x LoopIndex
		for b.Loop() {
			x.Repeats(msgs, nil, 1)
		}
	})
}
