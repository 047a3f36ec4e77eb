package redisstore

import (
	"bytes"
	"encoding/json"
	"sync"
)

// argEncoder encodes a commit's JSON arguments into one buffer reused
// across commits, where json.Marshal allocates (and copies into) a new
// slice for each. The bytes are the same: an Encoder escapes HTML as
// Marshal does, and the newline it ends each value with is left out.
//
// The buffer may move while it grows, so encode appends a nil placeholder
// to the arguments, and resolve, once everything is encoded, puts there
// the slice of the buffer it stands for.
type argEncoder struct {
	buf   bytes.Buffer
	enc   *json.Encoder
	spans []encSpan
}

// encSpan says args[at] is buf[start:end].
type encSpan struct{ at, start, end int }

var encoders = sync.Pool{New: func() any {
	e := new(argEncoder)
	e.enc = json.NewEncoder(&e.buf)
	return e
}}

// maxPooledEncoder is the largest buffer kept for reuse, so one huge
// commit does not pin its memory.
const maxPooledEncoder = 1 << 20

func getEncoder() *argEncoder { return encoders.Get().(*argEncoder) }

// encode encodes v and appends its placeholder to args.
func (e *argEncoder) encode(args []any, v any) ([]any, error) {
	start := e.buf.Len()
	if err := e.enc.Encode(v); err != nil {
		e.buf.Truncate(start)
		return args, err
	}
	e.spans = append(e.spans, encSpan{len(args), start, e.buf.Len() - 1}) // without the newline
	return append(args, nil), nil
}

// resolve puts in args the bytes each placeholder stands for.
func (e *argEncoder) resolve(args []any) {
	b := e.buf.Bytes()
	for _, sp := range e.spans {
		args[sp.at] = b[sp.start:sp.end:sp.end]
	}
}

// release hands the buffer back for reuse: the slices resolve gave out
// must no longer be used.
func (e *argEncoder) release() {
	if e.buf.Cap() > maxPooledEncoder {
		return
	}
	e.buf.Reset()
	e.spans = e.spans[:0]
	encoders.Put(e)
}
