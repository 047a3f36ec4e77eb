package workflow

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/twostep/twostep/templates/notices"
)

// DefaultLoopRepeats is how many repeats of one step end a round when
// engine.Config.LoopRepeats (and prompts.Options.LoopRepeats) is 0: the
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
// the action, its parameters (canonicalParams), its status, its result
// text and the names, types and sizes of the documents it produced. Two
// steps with the same fingerprint repeated each other.
func Fingerprint(m Message) string {
	params := canonicalParams(m.Parameters)
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
	return repeats(msgs, nil, round)
}

// repeats is Repeats over head followed by tail, so that the engine can
// look at its committed messages and a step's pending ones without
// copying both into one slice.
//
// It gives Repeats' results without fingerprinting every earlier step on
// every step (that was O(steps²) hashing per round): an earlier step is
// compared with the newest on what is cheap first (action, status, result
// text, documents; see sameOutcome), and only a step that matches on all
// of it has its parameters encoded and compared.
func repeats(head, tail []Message, round int) (newest Message, earlier []int, ok bool) {
	at := func(i int) *Message {
		if i < len(head) {
			return &head[i]
		}
		return &tail[i-len(head)]
	}
	i := len(head) + len(tail) - 1
	for ; i >= 0; i-- {
		if m := at(i); m.Round == round && m.Role == RoleAction {
			break
		}
	}
	if i < 0 {
		return Message{}, nil, false
	}
	n := at(i)
	var params []byte // newest's canonical parameters, encoded on first need
	nNUL := hasNUL(n)
	for j := range i {
		if m := at(j); m.Round == round && m.Role == RoleAction && repeated(n, m, nNUL, &params) {
			earlier = append(earlier, m.Step)
		}
	}
	return *n, earlier, true
}

// repeated reports whether action message m has newest's fingerprint,
// given an action of the same round: nNUL is hasNUL(newest), params
// newest's canonical parameters once encoded (nil before).
func repeated(newest, m *Message, nNUL bool, params *[]byte) bool {
	if m.Action != newest.Action {
		return false
	}
	same, exact := sameOutcome(newest, m, nNUL)
	switch {
	case !exact:
		return Fingerprint(*m) == Fingerprint(*newest)
	case same:
		if *params == nil {
			*params = canonicalParams(newest.Parameters)
		}
		return bytes.Equal(canonicalParams(m.Parameters), *params)
	}
	return false
}

// canonicalParams is the form in which two steps' parameters are compared:
// their JSON after a JSON round trip (keys sorted), with no parameters at
// all, nil or empty, as "{}". So a step about to be committed matches the
// steps a store read back, which went through a round trip: it drops an
// empty map (the field is omitempty, so it reads back nil), makes every
// number a float64 and replaces invalid UTF-8 with U+FFFD (which the
// first encoding writes as an escape, the second as itself). It is never
// nil.
func canonicalParams(p map[string]any) []byte {
	if len(p) == 0 {
		return []byte("{}")
	}
	b, err := json.Marshal(p)
	var v any
	if err == nil {
		err = json.Unmarshal(b, &v)
	}
	if err == nil {
		b, err = json.Marshal(v)
	}
	if err != nil {
		// Not encodable (no store keeps such a message): the error text
		// keeps it apart from every encodable value.
		return []byte("!" + err.Error())
	}
	return b
}

// sameOutcome compares what Fingerprint hashes after the action and the
// parameters — status, result text and documents — between two messages
// of the same action. Fingerprint's input is action, parameters (JSON,
// which never holds a NUL byte), status and text joined by NULs, then a
// NUL, name, NUL, type, NUL and size per document; when none of these
// strings holds a NUL, the NULs are exactly the separators, so two inputs
// with the same action are equal exactly when the parameters are and every
// field after them is: exact is true and same says whether those fields
// are. When a NUL occurs, fields could shift into one another; exact is
// false and the caller compares fingerprints. aNUL is hasNUL(a).
//
// b is not scanned for NULs when a holds none and both have as many
// documents: equal inputs would then hold as many NULs, all of them
// separators, so b would hold none either, and comparing the fields is
// exact.
func sameOutcome(a, b *Message, aNUL bool) (same, exact bool) {
	if aNUL || len(a.Documents) != len(b.Documents) && hasNUL(b) {
		return false, false
	}
	if a.Status != b.Status || a.Text != b.Text || len(a.Documents) != len(b.Documents) {
		return false, true
	}
	for k, d := range a.Documents {
		e := b.Documents[k]
		if d.Name != e.Name || d.MimeType != e.MimeType || d.Size != e.Size {
			return false, true
		}
	}
	return true, true
}

// hasNUL reports whether a string sameOutcome compares holds a NUL byte.
func hasNUL(m *Message) bool {
	if strings.IndexByte(string(m.Status), 0) >= 0 || strings.IndexByte(m.Text, 0) >= 0 {
		return true
	}
	for _, d := range m.Documents {
		if strings.IndexByte(d.Name, 0) >= 0 || strings.IndexByte(d.MimeType, 0) >= 0 {
			return true
		}
	}
	return false
}

// StepRepeats is what Repeats finds in a round: its newest action step
// and the steps of the earlier ones it repeated, oldest first. Found is
// false when the round has no action step.
type StepRepeats struct {
	Newest  Message
	Earlier []int
	Found   bool
}

// LoopWarning returns the warning the next Stage 1 prompt carries when the
// round's newest step repeated an earlier one limit-1 times (one more
// repeat ends the round with StopLoop), and "" otherwise or when limit is 0.
func LoopWarning(msgs []Message, round, limit int) string {
	if limit <= 0 {
		return ""
	}
	newest, earlier, ok := Repeats(msgs, round)
	return StepRepeats{newest, earlier, ok}.LoopWarning(limit)
}

// LoopWarning is the package's LoopWarning for what Repeats found.
func (s StepRepeats) LoopWarning(limit int) string {
	if limit <= 0 || !s.Found || len(s.Earlier) == 0 || len(s.Earlier) < limit-1 {
		return ""
	}
	return notices.LoopWarning(s.repeat(), CompleteAction)
}

// loopEnd returns the closing text of a round ended by a loop, or "" when
// the newest step has not repeated limit times.
func loopEnd(msgs []Message, round, limit int) string {
	return loopEndOf(msgs, nil, round, limit)
}

// loopEndOf is loopEnd over head followed by tail.
func loopEndOf(head, tail []Message, round, limit int) string {
	if limit <= 0 {
		return ""
	}
	newest, earlier, ok := repeats(head, tail, round)
	return StepRepeats{newest, earlier, ok}.LoopEnd(limit)
}

// LoopEnd is the closing text of a round that loopEnd gives for what
// Repeats found ("" when nothing repeats often enough).
func (s StepRepeats) LoopEnd(limit int) string {
	if limit <= 0 || !s.Found || len(s.Earlier) < limit {
		return ""
	}
	return notices.LoopEnd(s.repeat())
}

// repeat is what the notices say about the repeated step.
func (s StepRepeats) repeat() notices.Repeat {
	return notices.Repeat{Step: s.Newest.Step, Action: s.Newest.Action, Earlier: s.Earlier}
}
