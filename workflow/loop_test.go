package workflow

import "testing"

// TestRepeats: the newest action message of the round is compared with
// the round's earlier ones on action, canonical parameters, status, result
// and produced documents; other rounds and different results do not count.
func TestRepeats(t *testing.T) {
	t.Parallel()
	act := func(round, step int, params map[string]any, text string) Message {
		return Message{Round: round, Step: step, Role: RoleAction, Action: "crm.lookup", Parameters: params,
			Status: MessageSuccess, Text: text, Documents: []Document{{Name: "r.json", MimeType: "application/json", Size: 9}}}
	}
	p1 := map[string]any{"id": 7, "fields": []any{"a", "b"}}
	p1Reordered := map[string]any{"fields": []any{"a", "b"}, "id": 7}
	msgs := []Message{
		act(1, 1, p1, "found"), // another round
		{Round: 2, Role: RoleUser, Text: "again"},
		act(2, 1, p1, "found"),
		act(2, 2, p1, "found but changed"), // another result
		act(2, 3, map[string]any{"id": 8}, "found"),
		act(2, 4, p1Reordered, "found"),
		{Round: 2, Step: 5, Role: RoleAssistant, Text: "thinking"},
	}
	newest, earlier, ok := Repeats(msgs, 2)
	if !ok || newest.Step != 4 || len(earlier) != 1 || earlier[0] != 1 {
		t.Errorf("Repeats = step %d, earlier %v, %v; want step 4 repeating step 1", newest.Step, earlier, ok)
	}
	if _, _, ok := Repeats(msgs[:2], 2); ok {
		t.Error("a round with no action message reported a newest step")
	}
	withDoc := act(2, 6, p1, "found")
	withDoc.Documents[0].Size = 10
	if _, earlier, _ := Repeats(append(msgs, withDoc), 2); len(earlier) != 0 {
		t.Errorf("a step producing a different document repeats %v", earlier)
	}
	if w := LoopWarning(msgs, 2, 2); w == "" {
		t.Error("one repeat with limit 2 gives no warning")
	}
	if w := LoopWarning(msgs, 2, 3); w != "" {
		t.Errorf("one repeat with limit 3 warns: %q", w)
	}
	if w := LoopWarning(msgs, 2, 0); w != "" {
		t.Errorf("detection off still warns: %q", w)
	}
	if got := loopEnd(msgs, 2, 1); got == "" {
		t.Error("one repeat with limit 1 does not end the round")
	}
	if LoopLimit(0) != DefaultLoopRepeats || LoopLimit(-1) != 0 || LoopLimit(5) != 5 {
		t.Errorf("LoopLimit = %d, %d, %d", LoopLimit(0), LoopLimit(-1), LoopLimit(5))
	}
}

// TestRepeatsAfterAJSONRoundTrip: a store reads messages back in the form
// a JSON round trip gives them (an empty parameter map omitted, so nil;
// numbers float64; invalid UTF-8 as U+FFFD), while the step about to be
// committed holds its parameters as built. Both forms are the same
// parameters: a repeated parameterless action, or one whose parameters
// only changed form, is a repeat, in the engine's check (committed
// messages, then the pending one) as in Repeats and Fingerprint.
func TestRepeatsAfterAJSONRoundTrip(t *testing.T) {
	t.Parallel()
	act := func(step int, params map[string]any) Message {
		return Message{Round: 1, Step: step, Role: RoleAction, Action: "crm.ping", Parameters: params,
			Status: MessageSuccess, Text: "pong"}
	}
	tests := []struct {
		name           string
		pending, saved map[string]any
	}{
		{"no parameters", map[string]any{}, nil},
		{"numbers and text", map[string]any{"id": 7, "q": "caf\xe9", "ids": []int{1, 2}},
			map[string]any{"id": 7.0, "q": "caf\uFFFD", "ids": []any{1.0, 2.0}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			committed := []Message{act(1, tc.saved), act(2, tc.saved)}
			pending := []Message{act(3, tc.pending)}
			if _, earlier, _ := repeats(committed, pending, 1); len(earlier) != 2 {
				t.Errorf("the pending step repeats steps %v, want [1 2]", earlier)
			}
			if got := loopEndOf(committed, pending, 1, 2); got == "" {
				t.Error("two repeats with limit 2 do not end the round")
			}
			if Fingerprint(pending[0]) != Fingerprint(committed[0]) {
				t.Error("the fingerprints differ")
			}
			var x LoopIndex
			if _, earlier, _ := x.Repeats(committed, pending, 1); len(earlier) != 2 {
				t.Errorf("the loop index finds steps %v, want [1 2]", earlier)
			}
		})
	}
	other := act(3, map[string]any{"id": 8})
	if _, earlier, _ := repeats([]Message{act(1, nil)}, []Message{other}, 1); len(earlier) != 0 {
		t.Errorf("different parameters repeat steps %v", earlier)
	}
}
