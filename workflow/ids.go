package workflow

import (
	"strconv"
	"strings"

	"github.com/oklog/ulid/v2"
)

// ID prefixes. Ids are a prefix followed by a lower-case ULID, so ids of one
// kind sort by creation time.
const (
	PrefixWorkflow = "wf_"
	PrefixMessage  = "msg_"
	PrefixDocument = "doc_"
	PrefixTrace    = "tr_"
	PrefixApproval = "apr_"
)

// NewID returns a new sortable id with the given prefix. It is safe for
// concurrent use; ids made in the same millisecond by one process are
// monotonic.
func NewID(prefix string) string {
	// prefix + strings.ToLower(ulid.Make().String()) in one allocation:
	// ids are made several times per step.
	var buf [32]byte
	b := buf[:0]
	if len(prefix)+ulid.EncodedSize > len(buf) {
		b = make([]byte, 0, len(prefix)+ulid.EncodedSize)
	}
	b = append(b, prefix...)
	text := b[len(b) : len(b)+ulid.EncodedSize]
	_ = ulid.Make().MarshalTextTo(text) // cannot fail: text has EncodedSize bytes
	for i, c := range text {
		if 'A' <= c && c <= 'Z' {
			text[i] = c + 'a' - 'A'
		}
	}
	return string(b[:len(b)+ulid.EncodedSize])
}

// ValidID reports whether s is a well-formed id with the given prefix. It is
// used to reject malformed ids before they reach a store key.
func ValidID(prefix, s string) bool {
	rest, ok := strings.CutPrefix(s, prefix)
	if !ok || len(rest) != ulid.EncodedSize {
		return false
	}
	_, err := ulid.ParseStrict(strings.ToUpper(rest))
	return err == nil
}

// StepKey is a step's idempotency key, "{workflowId}:{round}:{step}": the
// same for every attempt of the step, so an action can recognise a repeat
// (DESIGN: ActionCall.IdempotencyKey).
func StepKey(workflowID string, round, step int) string {
	return workflowID + ":" + strconv.Itoa(round) + ":" + strconv.Itoa(step)
}
