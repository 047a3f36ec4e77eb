package upload

import (
	"encoding/base64"
	"errors"
	"slices"
)

// decodeBlock is how many base64 characters are decoded at a time.
const decodeBlock = 32 << 10

// streamDecoder decodes standard base64 fed one character at a time, in
// blocks, into one buffer, as base64.StdEncoding.DecodeString would.
type streamDecoder struct {
	limit   int64
	block   []byte // the transcoder's, shared by its documents one at a time
	n       int    // characters in block
	offset  int64  // characters before block
	out     []byte
	padded  bool // a block with padding was decoded: nothing may follow
	problem string
	over    bool
	// invalidJSON: the string itself is malformed; huma refuses the body.
	invalidJSON bool
	// inArena: out is still the spare capacity it was given.
	inArena bool
}

// newStreamDecoder decodes into dst's spare capacity (dst has length 0;
// nil: a buffer of its own that grows with the bytes decoded, so an empty
// or tiny document costs nothing or a few bytes), through block.
func newStreamDecoder(limit int64, dst, block []byte) *streamDecoder {
	if dst == nil {
		return &streamDecoder{limit: limit, block: block}
	}
	return &streamDecoder{limit: limit, out: dst, block: block, inArena: true}
}

// add feeds one character; line breaks are dropped, and nothing is kept
// once a problem was found.
func (d *streamDecoder) add(b byte) {
	if d.problem != "" {
		return
	}
	if b == '\r' || b == '\n' {
		return // ignored by the standard decoder too
	}
	if d.n == len(d.block) {
		d.flush()
		if d.problem != "" {
			return
		}
	}
	d.block[d.n] = b
	d.n++
}

// addRun adds characters that need no unescaping and hold no newline.
func (d *streamDecoder) addRun(p []byte) {
	for len(p) > 0 && d.problem == "" {
		if d.n == len(d.block) {
			d.flush()
			continue
		}
		k := copy(d.block[d.n:], p)
		d.n += k
		p = p[k:]
	}
}

// flush decodes the block; only the last block may end with padding.
func (d *streamDecoder) flush() {
	if d.n == 0 {
		return
	}
	if d.padded {
		d.problem = base64.CorruptInputError(d.offset).Error()
		return
	}
	if d.over {
		d.offset += int64(d.n)
		d.n = 0
		return
	}
	need := base64.StdEncoding.DecodedLen(d.n)
	if int64(len(d.out)+need) > d.limit+3 {
		d.over, d.out = true, nil
		d.offset += int64(d.n)
		d.n = 0
		return
	}
	if cap(d.out)-len(d.out) < need {
		d.inArena = false // cannot happen with a true Content-Length
		d.out = slices.Grow(d.out, need)
	}
	k, err := base64.StdEncoding.Decode(d.out[len(d.out):len(d.out)+need], d.block[:d.n])
	if err != nil {
		var ce base64.CorruptInputError
		if errors.As(err, &ce) {
			err = base64.CorruptInputError(d.offset + int64(ce))
		}
		d.problem = err.Error()
		return
	}
	d.padded = d.block[d.n-1] == '='
	d.out = d.out[:len(d.out)+k]
	d.offset += int64(d.n)
	d.n = 0
}

// finish decodes what is left and returns the document: its bytes, why
// it is not valid base64, or that it is too large.
func (d *streamDecoder) finish() *doc {
	d.flush()
	switch {
	case d.problem != "":
		return &doc{problem: "content is not valid standard base64: " + d.problem}
	case d.over || int64(len(d.out)) > d.limit:
		return &doc{tooLarge: true}
	}
	if d.out == nil {
		d.out = []byte{}
	}
	return &doc{content: d.out[:len(d.out):len(d.out)]} // appending to it never reaches the next document
}
