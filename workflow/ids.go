package workflow

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

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
// concurrent use; the ids one process makes strictly increase.
func NewID(prefix string) string { return NewIDAt(prefix, time.Now()) }

// NewIDAt is NewID for a caller that has just read the clock.
func NewIDAt(prefix string, now time.Time) string {
	// prefix + strings.ToLower(ulid.Make().String()) in one allocation:
	// ids are made several times per step.
	var buf [32]byte
	b := buf[:0]
	if len(prefix)+ulid.EncodedSize > len(buf) {
		b = make([]byte, 0, len(prefix)+ulid.EncodedSize)
	}
	b = append(b, prefix...)
	text := b[len(b) : len(b)+ulid.EncodedSize]
	id := ids.next(now)
	_ = id.MarshalTextTo(text) // cannot fail: text has EncodedSize bytes
	for i, c := range text {
		if 'A' <= c && c <= 'Z' {
			text[i] = c + 'a' - 'A'
		}
	}
	return string(b[:len(b)+ulid.EncodedSize])
}

// ids is the process's ULID source. (ulid.Make, which it replaces, has a
// process-wide source too; its entropy goes through an io.Reader, which
// costs an allocation per id.)
var ids ulidSource

// ulidSource makes ULIDs that strictly increase: the first of a
// millisecond has random entropy, the next ones of the same millisecond
// (or of an earlier one, should the clock step back) add a random
// increment in [1, 2³²) to the last one's, as ulid's monotonic entropy
// does, keeping the last one's millisecond.
type ulidSource struct {
	mu   sync.Mutex
	ms   uint64 // the last id's millisecond; 0 before the first
	hi   uint16 // the last id's 80 bits of entropy
	lo   uint64
	rand func() uint64 // uniform random bits; nil: math/rand/v2's
}

func (s *ulidSource) uint64() uint64 {
	if s.rand != nil {
		return s.rand()
	}
	return rand.Uint64()
}

func (s *ulidSource) next(now time.Time) (id ulid.ULID) {
	ms := ulid.Timestamp(now)
	s.mu.Lock()
	if s.ms != 0 && ms <= s.ms {
		ms = s.ms
		lo := s.lo
		s.lo += 1 + s.uint64()%math.MaxUint32
		if s.lo < lo {
			s.hi++
		}
		if s.hi == 0 && s.lo < lo {
			// The 80 bits overflowed (the millisecond's first entropy
			// was near the top): go on in the next millisecond.
			ms = s.ms + 1
			s.hi, s.lo = uint16(s.uint64()), s.uint64()
		}
	} else {
		s.hi, s.lo = uint16(s.uint64()), s.uint64()
	}
	s.ms = ms
	hi, lo := s.hi, s.lo
	s.mu.Unlock()
	_ = id.SetTime(ms) // fails only after the year 10889
	binary.BigEndian.PutUint16(id[6:], hi)
	binary.BigEndian.PutUint64(id[8:], lo)
	return id
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
