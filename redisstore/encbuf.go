package redisstore

import (
	"encoding/json"
	"slices"
	"sync"
)

// argEncoder encodes a commit's JSON arguments into one buffer reused
// across commits, where json.Marshal allocates (and copies into) a new
// slice for each. The bytes are the same: an Encoder escapes HTML as
// Marshal does, and the newline it ends each value with is left out;
// traces, workflow states and messages are written without reflection
// (encodeWith).
//
// The buffer may move while it grows, so encode appends a nil placeholder
// to the arguments, and resolve, once everything is encoded, puts there
// the slice of the buffer it stands for (see encodedArg).
type argEncoder struct {
	buf   []byte
	enc   *json.Encoder // writes into buf (Write)
	spans []encSpan
	vals  []encodedArg // the arguments resolve gives out, reused
}

// encSpan says args[at] is buf[start:end].
type encSpan struct{ at, start, end int }

var encoders = sync.Pool{New: func() any {
	e := new(argEncoder)
	e.enc = json.NewEncoder(e)
	return e
}}

// maxPooledEncoder is the largest buffer kept for reuse, so one huge
// commit does not pin its memory.
const maxPooledEncoder = 1 << 20

func getEncoder() *argEncoder { return encoders.Get().(*argEncoder) }

// Write appends p to the buffer, for the json.Encoder.
func (e *argEncoder) Write(p []byte) (int, error) {
	e.buf = append(e.buf, p...)
	return len(p), nil
}

// encode encodes v and appends its placeholder to args.
func (e *argEncoder) encode(args []any, v any) ([]any, error) {
	start := len(e.buf)
	if err := e.enc.Encode(v); err != nil {
		e.buf = e.buf[:start]
		return args, err
	}
	e.spans = append(e.spans, encSpan{len(args), start, len(e.buf) - 1}) // without the newline
	return append(args, nil), nil
}

// encodeWith encodes v as encode does, with appendJSON when it can:
// appendTrace, appendWorkflow or appendMessage, which write Marshal's bytes
// without reflection or report false (dst unchanged) to leave v to
// encoding/json.
func encodeWith[T any](e *argEncoder, args []any, v *T, appendJSON func(dst []byte, v *T) ([]byte, bool)) ([]any, error) {
	start := len(e.buf)
	var ok bool
	if e.buf, ok = appendJSON(e.buf, v); !ok {
		return e.encode(args, v)
	}
	e.spans = append(e.spans, encSpan{len(args), start, len(e.buf)})
	return append(args, nil), nil
}

// resolve puts in args the bytes each placeholder stands for, each as a
// *encodedArg of the encoder's own: a []byte would be boxed, one
// allocation per argument, where a pointer is not.
func (e *argEncoder) resolve(args []any) {
	e.vals = slices.Grow(e.vals[:0], len(e.spans))[:len(e.spans)] // no pointer into it is taken before
	for i, sp := range e.spans {
		e.vals[i].b = e.buf[sp.start:sp.end:sp.end]
		args[sp.at] = &e.vals[i]
	}
}

// encodedArg is an encoded script argument: go-redis writes what
// MarshalBinary returns.
type encodedArg struct{ b []byte }

// MarshalBinary returns the encoded bytes.
func (a *encodedArg) MarshalBinary() ([]byte, error) { return a.b, nil }

// release hands the buffer back for reuse: the slices resolve gave out
// must no longer be used.
func (e *argEncoder) release() {
	if cap(e.buf) > maxPooledEncoder {
		return
	}
	e.buf = e.buf[:0]
	e.spans = e.spans[:0]
	clear(e.vals)
	encoders.Put(e)
}
