// Package jsonstream reads one JSON object while it streams: it says when
// each top-level member's value is complete (with its raw JSON text) and
// hands over the decoded text of string values piece by piece, so a
// caller can act on a model's reply before the reply has ended (DESIGN
// §11.2, §11.3). It imports nothing of the project.
package jsonstream

import (
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Reader reads one JSON object fed in pieces of any size (Write). Text
// before the object's opening brace (a model's prose or a code fence) and
// after its closing brace is skipped. The zero value is ready; set the
// callbacks before the first Write. A Reader is not safe for concurrent
// use: feed it from one goroutine at a time.
type Reader struct {
	// OnMember, when set, is called once a top-level member's value is
	// complete, with its key and its raw JSON text. raw is only valid
	// during the call.
	OnMember func(key string, raw []byte)
	// OnString, when set, is called with each decoded piece of a string
	// value, in order, with the value's path: the top-level key, nested
	// object keys joined by "." and "[]" for an array element (e.g.
	// "parameters.message", "learnings[]"). Pieces never split a UTF-8
	// sequence; a value may come in any number of pieces.
	OnString func(path, piece string)

	buf     []byte // the object's text from its opening brace
	started bool
	done    bool
	err     error
	stack   []frame
	// memberStart is where the current top-level member's value starts
	// in buf.
	memberStart int
	str         stringState
	inScalar    bool
}

// frame is an open object or array.
type frame struct {
	array bool
	key   string // the current member's key (objects)
	st    state
}

type state uint8

const (
	stKeyOrEnd   state = iota // object: a key or '}' (just opened)
	stKey                     // object: a key (after ',')
	stColon                   // object: ':'
	stValue                   // a value
	stValueOrEnd              // array: a value or ']' (just opened)
	stAfter                   // ',' or the closing bracket
)

// stringState is the string being read.
type stringState struct {
	on, key bool
	esc     bool
	hex     []byte // the hex digits of a \u escape being read (nil: none)
	high    rune   // a UTF-16 high surrogate waiting for its low half
	text    []byte // decoded text not yet handed over (or the key so far)
}

// Done reports whether the object has been read to its closing brace.
func (r *Reader) Done() bool { return r.done }

// Err returns why the text is not a JSON object, nil while it may still
// be one.
func (r *Reader) Err() error { return r.err }

// Write feeds the next piece of the text. It never fails (the io.Writer
// error is always nil); a malformed object stops the reading and Err says
// why.
func (r *Reader) Write(p []byte) (int, error) {
	for _, c := range p {
		if r.done || r.err != nil {
			break
		}
		r.step(c)
	}
	r.flushString(false)
	return len(p), nil
}

// WriteString is Write for a string.
func (r *Reader) WriteString(s string) (int, error) { return r.Write([]byte(s)) }

// step reads one byte.
func (r *Reader) step(c byte) {
	if !r.started {
		if c == '{' {
			r.started = true
			r.buf = append(r.buf, c)
			r.stack = append(r.stack, frame{st: stKeyOrEnd})
		}
		return
	}
	r.buf = append(r.buf, c)
	switch {
	case r.str.on:
		r.stringByte(c)
		return
	case r.inScalar:
		if isScalarByte(c) {
			return
		}
		r.inScalar = false
		r.valueDone(len(r.buf) - 1)
	}
	r.structural(c)
}

// structural reads a byte outside strings and scalars.
func (r *Reader) structural(c byte) {
	if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
		return
	}
	f := &r.stack[len(r.stack)-1]
	switch f.st {
	case stKeyOrEnd, stKey:
		switch {
		case c == '"':
			r.str = stringState{on: true, key: true, text: r.str.text[:0]}
		case c == '}' && f.st == stKeyOrEnd:
			r.close()
		default:
			r.fail(c, "a key")
		}
	case stColon:
		if c != ':' {
			r.fail(c, "':'")
			return
		}
		f.st = stValue
	case stValue, stValueOrEnd:
		if c == ']' && f.st == stValueOrEnd {
			r.close()
			return
		}
		r.startValue(c)
	case stAfter:
		switch {
		case c == ',' && f.array:
			f.st = stValue
		case c == ',':
			f.st = stKey
		case c == ']' && f.array, c == '}' && !f.array:
			r.close()
		default:
			r.fail(c, "',' or the end of the "+f.kind())
		}
	}
}

// startValue reads a value's first byte.
func (r *Reader) startValue(c byte) {
	if len(r.stack) == 1 {
		r.memberStart = len(r.buf) - 1
	}
	r.stack[len(r.stack)-1].st = stAfter
	switch {
	case c == '"':
		r.str = stringState{on: true, text: r.str.text[:0]}
	case c == '{':
		r.stack = append(r.stack, frame{st: stKeyOrEnd})
	case c == '[':
		r.stack = append(r.stack, frame{array: true, st: stValueOrEnd})
	case c == '-' || (c >= '0' && c <= '9') || c == 't' || c == 'f' || c == 'n':
		r.inScalar = true
	default:
		r.fail(c, "a value")
	}
}

// close closes the innermost object or array.
func (r *Reader) close() {
	r.stack = r.stack[:len(r.stack)-1]
	if len(r.stack) == 0 {
		r.done = true
		return
	}
	r.valueDone(len(r.buf))
}

// valueDone is called when a value ends at buf[:end]: a top-level
// member's value is reported.
func (r *Reader) valueDone(end int) {
	if len(r.stack) != 1 || r.OnMember == nil {
		return
	}
	r.OnMember(r.stack[0].key, r.buf[r.memberStart:end])
}

func (r *Reader) fail(c byte, want string) {
	r.err = fmt.Errorf("jsonstream: at byte %d: want %s, got %q", len(r.buf)-1, want, c)
}

func (f frame) kind() string {
	if f.array {
		return "array"
	}
	return "object"
}

// isScalarByte reports whether c may continue a number or a literal.
func isScalarByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '.' || c == '+' || c == '-'
}

// path is the path of the value being read (see OnString).
func (r *Reader) path() string {
	var b strings.Builder
	for i, f := range r.stack {
		switch {
		case f.array:
			b.WriteString("[]")
		case i > 0:
			b.WriteByte('.')
			b.WriteString(f.key)
		default:
			b.WriteString(f.key)
		}
	}
	return b.String()
}

// stringByte reads a byte inside a string.
func (r *Reader) stringByte(c byte) {
	s := &r.str
	switch {
	case s.hex != nil:
		s.hex = append(s.hex, c)
		if len(s.hex) == 4 {
			r.unicodeEscape()
		}
	case s.esc:
		s.esc = false
		switch c {
		case 'u':
			s.hex = make([]byte, 0, 4)
			return
		case 'n':
			c = '\n'
		case 't':
			c = '\t'
		case 'r':
			c = '\r'
		case 'b':
			c = '\b'
		case 'f':
			c = '\f'
		}
		r.appendRune(rune(c))
	case c == '\\':
		s.esc = true
	case c == '"':
		r.endString()
	default:
		r.dropHigh()
		s.text = append(s.text, c)
	}
}

// unicodeEscape decodes the \u escape just read, pairing surrogates.
func (r *Reader) unicodeEscape() {
	s := &r.str
	var v rune
	for _, h := range s.hex {
		v <<= 4
		switch {
		case h >= '0' && h <= '9':
			v |= rune(h - '0')
		case h >= 'a' && h <= 'f':
			v |= rune(h-'a') + 10
		case h >= 'A' && h <= 'F':
			v |= rune(h-'A') + 10
		default:
			r.fail(h, "a hex digit")
		}
	}
	s.hex = nil
	switch {
	case utf16.IsSurrogate(v) && v < 0xDC00:
		r.dropHigh()
		s.high = v
	case utf16.IsSurrogate(v) && s.high != 0:
		s.text = utf8.AppendRune(s.text, utf16.DecodeRune(s.high, v))
		s.high = 0
	default:
		r.appendRune(v)
	}
}

// appendRune appends a decoded rune (an unpaired surrogate becomes
// U+FFFD, as encoding/json decodes it).
func (r *Reader) appendRune(v rune) {
	r.dropHigh()
	r.str.text = utf8.AppendRune(r.str.text, v)
}

// dropHigh replaces a high surrogate left without its low half.
func (r *Reader) dropHigh() {
	if r.str.high != 0 {
		r.str.text = utf8.AppendRune(r.str.text, utf8.RuneError)
		r.str.high = 0
	}
}

// endString ends the string being read.
func (r *Reader) endString() {
	r.dropHigh()
	f := &r.stack[len(r.stack)-1]
	if r.str.key {
		f.key = string(r.str.text)
		f.st = stColon
		r.str = stringState{text: r.str.text[:0]}
		return
	}
	r.flushString(true)
	r.str = stringState{text: r.str.text[:0]}
	r.valueDone(len(r.buf))
}

// flushString hands the decoded text of the string value being read to
// OnString: all of it at the string's end, else all but an incomplete
// UTF-8 sequence at its tail.
func (r *Reader) flushString(end bool) {
	s := &r.str
	if (!s.on && !end) || s.key || len(s.text) == 0 {
		return
	}
	n := len(s.text)
	if !end {
		n = completePrefix(s.text)
	}
	if n > 0 && r.OnString != nil {
		r.OnString(r.path(), string(s.text[:n]))
	}
	s.text = append(s.text[:0], s.text[n:]...)
}

// completePrefix is the length of b without an incomplete UTF-8 sequence
// at its end.
func completePrefix(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if utf8.FullRune(b[i:]) {
				return len(b)
			}
			return i
		}
	}
	return len(b)
}
