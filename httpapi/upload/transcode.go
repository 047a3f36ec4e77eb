// Package upload transcodes an upload body as it is read: a JSON body whose
// top-level documents[i].content strings are base64 is copied with those
// strings emptied, and each content is decoded straight into its final
// buffer on the way (Stash). The HTTP layer hands the emptied body to its
// validator and takes the bytes from the Stash, so one upload costs about
// its decoded size instead of four to five times it. The package knows
// JSON and base64 only: no HTTP, no huma.
package upload

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Uploads arrive as base64 strings inside a JSON body. Left to huma, one
// 24 MiB upload is held as the raw body, a parsed copy for validation, the
// decoded struct's string and the decoded bytes: 4–5 times its size. The
// upload routes therefore stream their body before huma sees it: every
// documents[i].content string is base64-decoded while it is read, straight
// into the document's final buffer, and huma gets the same JSON with those
// strings emptied, so validation, the OpenAPI document and every other
// answer stay exactly as they were. With a Content-Length, the request's
// documents are decoded into one buffer of 3/4 of the bytes still to come
// when the first content starts (no base64 can decode to more), each a
// full-capacity slice of it; without one, each document's buffer grows as
// it is decoded, in proportion to the bytes actually received. Peak memory
// per upload is about its decoded size plus a small read buffer.
//
// The stream also enforces the body's shape limits while it reads, before
// any document or huma's parse of the body is held: more than
// Limits.MaxDocuments documents, or more JSON values than a valid body can
// hold (ValueLimit), stops the read at once with a ShapeError.

// Limits bound what one body may hold.
type Limits struct {
	// MaxDocuments bounds the documents array (0: unbounded).
	MaxDocuments int
	// MaxDocumentBytes bounds one decoded content; a larger one is kept as
	// too large, its bytes dropped.
	MaxDocumentBytes int64
}

// Result is a body read by Transcode.
type Result struct {
	// Body is the JSON as sent with every documents[i].content emptied.
	Body []byte
	// Stash holds the decoded contents by document index.
	Stash *Stash
	// Read counts the bytes read from the input, also when reading failed.
	Read int64
}

// Transcode reads a JSON body of length bytes (-1: unknown) from in,
// decoding the documents' contents as it goes. A body that cannot be
// valid (too many documents or values) stops the read with a *ShapeError;
// a read error is returned as the reader gave it. On error the Result
// holds only Read: what was decoded is dropped at once.
func Transcode(in io.Reader, length int64, limits Limits) (Result, error) {
	t := &transcoder{
		in:        bufio.NewReaderSize(in, readBufferSize(length)),
		limits:    limits,
		length:    length,
		stash:     &Stash{docs: map[int]*doc{}},
		maxDocs:   limits.MaxDocuments,
		maxValues: ValueLimit(limits.MaxDocuments),
	}
	if length > 0 {
		t.out.Grow(int(min(length, maxReadBuffer))) // the body without its contents: at most its length
	}
	if err := t.run(); err != nil {
		return Result{Read: t.read}, err
	}
	return Result{Body: t.out.Bytes(), Stash: t.stash, Read: t.read}, nil
}

// doc is one documents[i].content decoded while the body was read.
type doc struct {
	content  []byte
	problem  string // content is not valid base64: the message for the 422
	tooLarge bool   // decoded content is over MaxDocumentBytes (the bytes are dropped)
}

// Stash holds the decoded contents of a body's documents by index.
type Stash struct{ docs map[int]*doc }

// Content is document i's decoded bytes: from the stash when the body
// stream decoded it, else from b64 (the content string the body holds,
// for a body that was not transcoded). problem is why the content is not
// valid base64; tooLarge says it decodes to more than maxBytes. A nil
// Stash decodes b64.
func (s *Stash) Content(i int, b64 string, maxBytes int64) (content []byte, problem string, tooLarge bool) {
	if s != nil {
		if d, ok := s.docs[i]; ok {
			return d.content, d.problem, d.tooLarge
		}
	}
	if int64(base64.StdEncoding.DecodedLen(len(b64))) > maxBytes+3 {
		return nil, "", true
	}
	content, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, "content is not valid standard base64: " + err.Error(), false
	}
	return content, "", false
}

// ShapeError stops the read of a body that cannot be valid: too many
// documents or values. Location is where, in the validator's terms
// ("body.documents").
type ShapeError struct{ Location, Msg string }

// Error is "location: message".
func (e *ShapeError) Error() string { return e.Location + ": " + e.Msg }

// maxReadBuffer is the transcoder's read buffer for a body of unknown or
// larger length.
const maxReadBuffer = 64 << 10

// readBufferSize is the read buffer for a body of length bytes (-1:
// unknown): a small body gets one its size (plus one byte, to see the end
// in the same read), not 64 KiB.
func readBufferSize(length int64) int {
	if length < 0 || length >= maxReadBuffer {
		return maxReadBuffer
	}
	return int(length) + 1 // bufio rounds it up to its minimum
}

// transcoder copies a JSON body to out, decoding the content strings of
// the top-level documents array into the stash. It understands only the
// structure it walks (strings, objects, arrays); anything it does not
// expect is copied through verbatim, so huma reports the same syntax and
// validation errors as for the original body.
type transcoder struct {
	in     *bufio.Reader
	out    bytes.Buffer
	limits Limits
	length int64 // Content-Length, -1 when unknown
	read   int64
	stash  *Stash
	// arena holds the decoded documents back to back (len: the bytes in
	// use); allocated at the first content when the length is known.
	arena []byte
	// block is the base64 block every document's decoder shares.
	block []byte
	// maxDocs and maxValues bound the documents and the JSON values the
	// body may hold (0: unbounded); values counts the values read.
	maxDocs, maxValues, values int
}

// ValueLimit is how many JSON values (objects, arrays, strings,
// numbers, literals; object keys included) an upload body may hold:
// bodyValueHeadroom for everything but the documents, and
// documentValueLimit per document. A hostile body of a million tiny values
// is still stopped after a few thousand, before anything parses it.
func ValueLimit(maxDocs int) int { return bodyValueHeadroom + documentValueLimit*max(maxDocs, 0) }

// bodyValueHeadroom bounds the JSON values of an upload body outside its
// documents. A valid create holds at most 19 today (the prompt, mode,
// maxSteps, a webhook with all four events, the documents key and array);
// the headroom is generous so that a new body field never turns a valid
// request into a 422. httpapi's TestUploadBodyValueLimitsHold derives a valid body's
// most from the OpenAPI schemas of the upload routes and fails when it
// outgrows these limits.
const bodyValueHeadroom = 512

// documentValueLimit bounds the JSON values of one document: a valid one
// holds 7 (the object, name, mimeType and content with their keys).
const documentValueLimit = 16

// value counts one JSON value against maxValues.
func (t *transcoder) value() error {
	t.values++
	if t.maxValues > 0 && t.values > t.maxValues {
		return &ShapeError{Location: "body", Msg: fmt.Sprintf("the body holds more than %d JSON values; a valid one holds far fewer", t.maxValues)}
	}
	return nil
}

// errRaw stops the walk: the rest of the body is copied unchanged.
var errRaw = errors.New("not the expected shape")

func (t *transcoder) run() error {
	err := t.root()
	if err == nil || errors.Is(err, errRaw) {
		n, cerr := io.Copy(&t.out, t.in)
		t.read += n
		return cerr
	}
	if errors.Is(err, io.EOF) {
		return nil // a truncated body: huma reports the syntax error
	}
	return err
}

func (t *transcoder) readByte() (byte, error) {
	b, err := t.in.ReadByte()
	if err == nil {
		t.read++
	}
	return b, err
}

func (t *transcoder) peek() (byte, error) {
	b, err := t.in.Peek(1)
	if err != nil {
		return 0, err
	}
	return b[0], nil
}

// space copies whitespace and returns the next byte without consuming it.
func (t *transcoder) space() (byte, error) {
	for {
		b, err := t.peek()
		if err != nil {
			return 0, err
		}
		if b != ' ' && b != '\t' && b != '\n' && b != '\r' {
			return b, nil
		}
		_, _ = t.readByte()
		t.out.WriteByte(b)
	}
}

// expect copies the next non-space byte if it is one of want.
func (t *transcoder) expect(want string) (byte, error) {
	b, err := t.space()
	if err != nil {
		return 0, err
	}
	if strings.IndexByte(want, b) < 0 {
		return 0, errRaw
	}
	_, _ = t.readByte()
	t.out.WriteByte(b)
	return b, nil
}

// object walks an object, calling member for each key (after its colon).
func (t *transcoder) object(member func(key string) error) error {
	if _, err := t.expect("{"); err != nil {
		return err
	}
	if err := t.value(); err != nil {
		return err
	}
	if b, err := t.space(); err != nil {
		return err
	} else if b == '}' {
		_, _ = t.readByte()
		t.out.WriteByte(b)
		return nil
	}
	for {
		key, err := t.key()
		if err != nil {
			return err
		}
		if _, err := t.expect(":"); err != nil {
			return err
		}
		if err := member(key); err != nil {
			return err
		}
		if b, err := t.expect(",}"); err != nil || b == '}' {
			return err
		}
	}
}

func (t *transcoder) root() error {
	return t.object(func(key string) error {
		if key != "documents" {
			return t.skip()
		}
		// A repeated key decodes into the same stash, as encoding/json
		// decodes a repeated array into the same slice elements.
		if b, err := t.space(); err != nil || b != '[' {
			return t.skipOr(err)
		}
		_, _ = t.expect("[")
		if err := t.value(); err != nil {
			return err
		}
		if b, err := t.space(); err != nil {
			return err
		} else if b == ']' {
			_, _ = t.readByte()
			t.out.WriteByte(b)
			return nil
		}
		for i := 0; ; i++ {
			if t.maxDocs > 0 && i >= t.maxDocs {
				return &ShapeError{Location: "body.documents", Msg: fmt.Sprintf("more than %d documents sent; the limit is %d per request", t.maxDocs, t.maxDocs)}
			}
			if b, err := t.space(); err != nil {
				return err
			} else if b != '{' {
				if err := t.skip(); err != nil {
					return err
				}
			} else if err := t.document(i); err != nil {
				return err
			}
			if b, err := t.expect(",]"); err != nil || b == ']' {
				return err
			}
		}
	})
}

func (t *transcoder) document(i int) error {
	return t.object(func(key string) error {
		if key != "content" {
			return t.skip()
		}
		if b, err := t.space(); err != nil || b != '"' {
			return t.skipOr(err)
		}
		if err := t.value(); err != nil {
			return err
		}
		d, err := t.content()
		if err != nil {
			return err
		}
		t.stash.docs[i] = d
		return nil
	})
}

func (t *transcoder) skipOr(err error) error {
	if err != nil {
		return err
	}
	return t.skip()
}

// key copies an object key and returns its value ("" for a long one,
// which matches no field of interest).
func (t *transcoder) key() (string, error) {
	if b, err := t.space(); err != nil {
		return "", err
	} else if b != '"' {
		return "", errRaw
	}
	if err := t.value(); err != nil {
		return "", err
	}
	start := t.out.Len()
	if err := t.copyString(); err != nil {
		return "", err
	}
	raw := t.out.Bytes()[start:]
	if len(raw) > 64 {
		return "", nil
	}
	var k string
	if json.Unmarshal(raw, &k) != nil {
		return "", errRaw
	}
	return k, nil
}

// copyString copies a string token, escapes included.
func (t *transcoder) copyString() error {
	b, err := t.readByte()
	if err != nil {
		return err
	}
	t.out.WriteByte(b) // the opening quote
	for {
		b, err := t.readByte()
		if err != nil {
			return err
		}
		t.out.WriteByte(b)
		switch b {
		case '"':
			return nil
		case '\\':
			e, err := t.readByte()
			if err != nil {
				return err
			}
			t.out.WriteByte(e)
		}
	}
}

// skip copies one value of any kind without looking inside it. Nesting
// is counted, not recursed, so no depth of brackets can exhaust the stack.
func (t *transcoder) skip() error {
	depth := 0
	for {
		b, err := t.space()
		if err != nil {
			return err
		}
		if b != '}' && b != ']' && b != ',' && b != ':' {
			if err := t.value(); err != nil {
				return err
			}
		}
		switch b {
		case '"':
			if err := t.copyString(); err != nil {
				return err
			}
		case '{', '[':
			_, _ = t.readByte()
			t.out.WriteByte(b)
			depth++
			continue
		case '}', ']':
			if depth == 0 {
				return errRaw // a value was expected
			}
			_, _ = t.readByte()
			t.out.WriteByte(b)
			depth--
		case ',', ':':
			if depth == 0 {
				return errRaw
			}
			_, _ = t.readByte()
			t.out.WriteByte(b)
			continue
		default: // a number, true, false, null or garbage: up to a delimiter
			for {
				_, _ = t.readByte()
				t.out.WriteByte(b)
				if b, err = t.peek(); err != nil {
					if errors.Is(err, io.EOF) && depth == 0 {
						return nil
					}
					return err
				}
				if strings.IndexByte(",:]}\"{[ \t\r\n", b) >= 0 {
					break
				}
			}
		}
		if depth == 0 {
			return nil
		}
	}
}

// content reads a content string, writing "" in its place, and decodes
// its base64 as it arrives. A string that is not valid JSON (a bad escape,
// a raw control character) leaves its first offending bytes in the
// output, so huma answers it as it would have.
func (t *transcoder) content() (*doc, error) {
	_, _ = t.readByte() // the opening quote
	t.out.WriteByte('"')
	if t.arena == nil && t.length > 0 {
		t.arena = make([]byte, 0, t.estimate()+3)
	}
	if t.block == nil {
		t.block = make([]byte, decodeBlock)
	}
	dec := newStreamDecoder(t.limits.MaxDocumentBytes, t.arena[len(t.arena):], t.block)
	invalid := func(raw ...byte) {
		if !dec.invalidJSON {
			dec.invalidJSON = true
			t.out.Write(raw)
		}
	}
	for {
		if err := t.plainRun(dec); err != nil {
			return nil, err
		}
		b, err := t.readByte()
		if err != nil {
			return nil, err
		}
		switch {
		case b == '"':
			t.out.WriteByte('"')
			d := dec.finish()
			if dec.inArena && d.content != nil {
				t.arena = t.arena[:len(t.arena)+len(d.content)]
			}
			return d, nil
		case b < 0x20:
			invalid(b)
		case b == '\\':
			r, raw, err := t.escape()
			if err != nil {
				return nil, err
			}
			switch {
			case raw != nil:
				invalid(raw...)
			case r < utf8.RuneSelf:
				dec.add(byte(r))
			default:
				dec.add(0xff) // outside the alphabet: reported as invalid base64
			}
		default:
			dec.add(b)
		}
	}
}

// plainRun feeds the decoder the buffered bytes up to the next quote,
// backslash or control character, in bulk.
func (t *transcoder) plainRun(dec *streamDecoder) error {
	if _, err := t.in.Peek(1); err != nil {
		return err
	}
	buf, _ := t.in.Peek(t.in.Buffered())
	i := 0
	for i < len(buf) && buf[i] != '"' && buf[i] != '\\' && buf[i] >= 0x20 {
		i++
	}
	dec.addRun(buf[:i])
	_, _ = t.in.Discard(i)
	t.read += int64(i)
	return nil
}

// escape reads the rest of a backslash escape and returns its rune, or
// the escape's bytes when it is not valid JSON.
func (t *transcoder) escape() (rune, []byte, error) {
	e, err := t.readByte()
	if err != nil {
		return 0, nil, err
	}
	switch e {
	case 'u':
		var hex [4]byte
		var r rune
		for i := range hex {
			b, err := t.readByte()
			if err != nil {
				return 0, nil, err
			}
			hex[i] = b
			var v byte
			switch {
			case '0' <= b && b <= '9':
				v = b - '0'
			case 'a' <= b && b <= 'f':
				v = b - 'a' + 10
			case 'A' <= b && b <= 'F':
				v = b - 'A' + 10
			default:
				return 0, append([]byte{'\\', 'u'}, hex[:i+1]...), nil
			}
			r = r<<4 | rune(v)
		}
		if utf16.IsSurrogate(r) {
			return utf8.RuneError, nil, nil
		}
		return r, nil, nil
	case 'b':
		return '\b', nil, nil
	case 'f':
		return '\f', nil, nil
	case 'n':
		return '\n', nil, nil
	case 'r':
		return '\r', nil, nil
	case 't':
		return '\t', nil, nil
	case '"', '\\', '/':
		return rune(e), nil, nil
	}
	return 0, []byte{'\\', e}, nil
}

// estimate is an upper bound of the decoded size of the contents still to
// come (0 when unknown).
func (t *transcoder) estimate() int64 {
	if t.length <= 0 {
		return 0
	}
	return max(0, t.length-t.read) / 4 * 3
}

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
