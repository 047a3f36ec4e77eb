package prompts

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/twostep/twostep/templates"
)

// A model reply over MaxReplyBytes is cut on a character boundary before
// it is quoted back (repair) or read (compaction): a multi-byte character
// across the limit is dropped whole, never cut in half.
func TestOversizedRepliesAreCutOnCharacterBoundaries(t *testing.T) {
	t.Parallel()
	b := newBuilder(t, 0)
	for _, char := range []string{"é", "计", "🙂"} {
		head := strings.Repeat("a", MaxReplyBytes-1)
		reply := head + strings.Repeat(char, 3)

		r, err := b.Repair(RepairInput{Previous: reply, Feedback: "the reply is not valid JSON"})
		if err != nil {
			t.Fatalf("Repair: %v", err)
		}
		if got := r.Placeholders[templates.KeyPreviousResponse]; got != head {
			t.Errorf("%q: repair quotes %d bytes ending %q, want the %d bytes before the character", char, len(got), got[max(len(got)-4, 0):], len(head))
		}
		text, _, problem := ParseSummary(reply, 2*MaxReplyBytes)
		if problem != "" || text != head || !utf8.ValidString(text) {
			t.Errorf("%q: summary of %d bytes (problem %q), want the %d bytes before the character", char, len(text), problem, len(head))
		}
	}
}
