package workflow

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
)

// DefaultLoopRepeats is how many repeats of one step end a round when
// EngineConfig.LoopRepeats (and prompts.Options.LoopRepeats) is 0: the
// repeat before it warns the model in the next Stage 1 prompt.
const DefaultLoopRepeats = 3

// LoopLimit resolves a configured loop-repeats value: 0 → the default, a
// negative value → 0 (loop detection off).
func LoopLimit(configured int) int {
	switch {
	case configured == 0:
		return DefaultLoopRepeats
	case configured < 0:
		return 0
	}
	return configured
}

// Fingerprint identifies what an action step did and what it got back:
// the action, its parameters (canonical JSON: keys sorted), its status,
// its result text and the names, types and sizes of the documents it
// produced. Two steps with the same fingerprint repeated each other.
func Fingerprint(m Message) string {
	params, _ := json.Marshal(m.Parameters)
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s", m.Action, params, m.Status, m.Text)
	for _, d := range m.Documents {
		fmt.Fprintf(h, "\x00%s\x00%s\x00%d", d.Name, d.MimeType, d.Size)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Repeats looks at the newest action message of round among msgs (seq
// order) and returns it with the steps of the round's earlier action
// messages that have its fingerprint, oldest first: len(earlier) is how
// many times the newest step repeated an earlier one. ok is false when the
// round has no action message.
func Repeats(msgs []Message, round int) (newest Message, earlier []int, ok bool) {
	i := len(msgs) - 1
	for ; i >= 0; i-- {
		if msgs[i].Round == round && msgs[i].Role == RoleAction {
			break
		}
	}
	if i < 0 {
		return Message{}, nil, false
	}
	newest = msgs[i]
	fp := Fingerprint(newest)
	for _, m := range msgs[:i] {
		if m.Round == round && m.Role == RoleAction && m.Action == newest.Action && Fingerprint(m) == fp {
			earlier = append(earlier, m.Step)
		}
	}
	return newest, earlier, true
}

// LoopWarning returns the warning the next Stage 1 prompt carries when the
// round's newest step repeated an earlier one limit-1 times (one more
// repeat ends the round with StopLoop), and "" otherwise or when limit is 0.
func LoopWarning(msgs []Message, round, limit int) string {
	if limit <= 0 {
		return ""
	}
	newest, earlier, ok := Repeats(msgs, round)
	if !ok || len(earlier) == 0 || len(earlier) < limit-1 {
		return ""
	}
	return fmt.Sprintf("# Repeated step\nStep %d called %s with the same parameters as step%s %s and got the same result. "+
		"Do not call it that way again: the next identical call ends the round. Use what the history already shows, "+
		"change the parameters, choose another action, or finish with %s.",
		newest.Step, newest.Action, plural(len(earlier)), joinSteps(earlier), CompleteAction)
}

// loopEnd returns the closing text of a round ended by a loop, or "" when
// the newest step has not repeated limit times.
func loopEnd(msgs []Message, round, limit int) string {
	if limit <= 0 {
		return ""
	}
	newest, earlier, ok := Repeats(msgs, round)
	if !ok || len(earlier) < limit {
		return ""
	}
	return fmt.Sprintf("I stopped this round because it was going in circles: step %d called %s with the same "+
		"parameters as step%s %s and got the same result each time. Tell me what to change, or ask again differently.",
		newest.Step, newest.Action, plural(len(earlier)), joinSteps(earlier))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func joinSteps(steps []int) string {
	s := make([]string, len(steps))
	for i, n := range steps {
		s[i] = fmt.Sprint(n)
	}
	if len(s) <= 1 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}
