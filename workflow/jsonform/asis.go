package jsonform

import "strings"

// maxAsIsDepth bounds the nesting CompactAsIs and AppendCompact follow;
// deeper values are left to encoding/json.
const maxAsIsDepth = 64

// CompactAsIs reports whether json.Marshal writes raw JSON b (a
// json.RawMessage) exactly as it is: b is one valid JSON value, without
// whitespace between tokens, holding no byte Marshal escapes in raw JSON
// (<, >, &, U+2028, U+2029). False may also mean "not sure" (nesting past
// maxAsIsDepth): the caller then leaves b to encoding/json.
//
// It is not inlined: inlined into memstore's storeTrace, the compiler
// moved its parser to the heap (one allocation per stored trace).
//
//go:noinline
func CompactAsIs(b []byte) bool {
	p := jsonParser[[]byte]{b: b}
	return p.value(0) && p.i == len(b)
}

// CompactAsIsPrefix is CompactAsIs for the value b starts with: its
// length, for a reader that looks for a value's end in a longer text.
//
//go:noinline
func CompactAsIsPrefix(b []byte) (n int, ok bool) {
	p := jsonParser[[]byte]{b: b}
	if !p.value(0) {
		return 0, false
	}
	return p.i, true
}

// AppendCompact appends src to dst as json.Compact writes it: the same
// bytes with the whitespace between tokens left out, strings untouched
// (no HTML escaping). It reports false, with dst unchanged, for text that
// is not one valid JSON value, or nests deeper than maxAsIsDepth: the
// caller then asks json.Compact, for its verdict and its error. It is
// json.Compact at a fraction of the cost for what a model replies.
func AppendCompact[T string | []byte](dst []byte, src T) ([]byte, bool) {
	p := jsonParser[T]{b: src, loose: true, out: dst}
	p.space()
	p.from = p.i
	if !p.value(0) {
		return dst, false
	}
	p.space()
	if p.i != len(src) {
		return dst, false
	}
	return p.out, true
}

// jsonParser checks one JSON value. Strict (loose false), it takes only
// the form json.Marshal writes a RawMessage in; loose, it takes any valid
// JSON and copies it to out without the whitespace between tokens: out
// gets b[from:i] whenever whitespace is skipped, and at the end.
type jsonParser[T string | []byte] struct {
	b     T
	i     int
	loose bool
	out   []byte
	from  int
}

// space skips whitespace between tokens; strict, there is none to skip.
func (p *jsonParser[T]) space() {
	if !p.loose || p.i >= len(p.b) || !isSpace(p.b[p.i]) {
		return
	}
	p.out = append(p.out, p.b[p.from:p.i]...)
	for p.i < len(p.b) && isSpace(p.b[p.i]) {
		p.i++
	}
	p.from = p.i
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (p *jsonParser[T]) value(depth int) bool {
	if p.i >= len(p.b) || depth > maxAsIsDepth {
		return false
	}
	ok := false
	switch c := p.b[p.i]; {
	case c == '{':
		ok = p.members('}', func() bool {
			if p.i >= len(p.b) || p.b[p.i] != '"' || !p.str() {
				return false
			}
			if p.space(); p.i >= len(p.b) || p.b[p.i] != ':' {
				return false
			}
			p.i++
			p.space()
			return p.value(depth + 1)
		})
	case c == '[':
		ok = p.members(']', func() bool { return p.value(depth + 1) })
	case c == '"':
		ok = p.str()
	case c == '-' || c >= '0' && c <= '9':
		ok = p.number()
	case c == 't':
		ok = p.literal("true")
	case c == 'f':
		ok = p.literal("false")
	case c == 'n':
		ok = p.literal("null")
	}
	if ok && depth == 0 && p.loose {
		p.out = append(p.out, p.b[p.from:p.i]...)
		p.from = p.i
	}
	return ok
}

// members reads an object or an array from its opening byte to closing,
// each member with member.
func (p *jsonParser[T]) members(closing byte, member func() bool) bool {
	p.i++
	p.space()
	if p.i < len(p.b) && p.b[p.i] == closing {
		p.i++
		return true
	}
	for {
		if !member() {
			return false
		}
		p.space()
		if more, ok := p.after(closing); !more {
			return ok
		}
		p.space()
	}
}

// after reads what follows a member of an object or an array: a comma
// (more is true) or the closing byte (ok is true). Anything else is not
// valid JSON: both are false.
func (p *jsonParser[T]) after(closing byte) (more, ok bool) {
	if p.i < len(p.b) {
		switch p.b[p.i] {
		case ',':
			p.i++
			return true, true
		case closing:
			p.i++
			return false, true
		}
	}
	return false, false
}

// str reads a string starting at its opening quote. Strict, it refuses
// the characters Marshal escapes in raw JSON; loose, it takes them as
// json.Compact does.
func (p *jsonParser[T]) str() bool {
	p.i++ // the quote
	plain := &strictPlain
	if p.loose {
		plain = &loosePlain
	}
	for p.i < len(p.b) {
		b, i := p.b, p.i // locals: the plain run is the hot loop
		for i < len(b) && plain[b[i]] {
			i++
		}
		if p.i = i; i == len(b) {
			break
		}
		c := b[i]
		switch {
		case c == '"':
			p.i++
			return true
		case c == '\\':
			p.i++
			if p.i >= len(p.b) {
				return false
			}
			switch p.b[p.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.i++
			case 'u':
				if p.i+4 >= len(p.b) {
					return false
				}
				for k := p.i + 1; k < p.i+5; k++ {
					if !isHex(p.b[k]) {
						return false
					}
				}
				p.i += 5
			default:
				return false
			}
		case c < 0x20:
			return false
		case p.loose:
			p.i++
		case c == '<' || c == '>' || c == '&':
			return false
		case c == 0xE2 && p.i+2 < len(p.b) && p.b[p.i+1] == 0x80 && p.b[p.i+2]&^1 == 0xA8:
			return false // U+2028, U+2029: Marshal escapes them
		default:
			p.i++
		}
	}
	return false
}

// loosePlain and strictPlain are the bytes str passes over without a
// second look: all but the quote, the backslash and control characters,
// and strict, not <, >, & nor 0xE2 (the first byte of U+2028 and U+2029).
var loosePlain, strictPlain = plainBytes(""), plainBytes("<>&\xE2")

func plainBytes(also string) (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\' && strings.IndexByte(also, byte(c)) < 0
	}
	return t
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *jsonParser[T]) number() bool {
	if p.b[p.i] == '-' {
		p.i++
	}
	if p.i >= len(p.b) {
		return false
	}
	switch c := p.b[p.i]; {
	case c == '0':
		p.i++
	case c >= '1' && c <= '9':
		p.digits()
	default:
		return false
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if p.digits() == 0 {
			return false
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if p.digits() == 0 {
			return false
		}
	}
	return true
}

// digits skips a run of decimal digits and returns its length.
func (p *jsonParser[T]) digits() int {
	n := 0
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
		n++
	}
	return n
}

func (p *jsonParser[T]) literal(lit string) bool {
	if len(p.b)-p.i < len(lit) || string(p.b[p.i:p.i+len(lit)]) != lit {
		return false
	}
	p.i += len(lit)
	return true
}
