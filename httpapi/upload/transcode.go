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
	"errors"
	"fmt"
	"io"
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

// run walks the body, then copies whatever the walk left unread: all of
// it after errRaw. A body that ends early is not an error here.
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
