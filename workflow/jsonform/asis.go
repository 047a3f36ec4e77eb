package jsonform

// maxAsIsDepth bounds the nesting CompactAsIs follows; deeper values are
// left to encoding/json.
const maxAsIsDepth = 64

// CompactAsIs reports whether json.Marshal writes raw JSON b (a
// json.RawMessage) exactly as it is: b is one valid JSON value, without
// whitespace between tokens, holding no byte Marshal escapes in raw JSON
// (<, >, &, U+2028, U+2029). False may also mean "not sure" (nesting past
// maxAsIsDepth): the caller then leaves b to encoding/json.
func CompactAsIs(b []byte) bool {
	p := asIsParser{b: b}
	return p.value(0) && p.i == len(b)
}

type asIsParser struct {
	b []byte
	i int
}

func (p *asIsParser) value(depth int) bool {
	if p.i >= len(p.b) || depth > maxAsIsDepth {
		return false
	}
	switch c := p.b[p.i]; {
	case c == '{':
		return p.members('}', func() bool {
			if p.i >= len(p.b) || p.b[p.i] != '"' || !p.str() || p.i >= len(p.b) || p.b[p.i] != ':' {
				return false
			}
			p.i++
			return p.value(depth + 1)
		})
	case c == '[':
		return p.members(']', func() bool { return p.value(depth + 1) })
	case c == '"':
		return p.str()
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	case c == 't':
		return p.literal("true")
	case c == 'f':
		return p.literal("false")
	case c == 'n':
		return p.literal("null")
	}
	return false
}

// members reads an object or an array from its opening byte to closing,
// each member with member.
func (p *asIsParser) members(closing byte, member func() bool) bool {
	p.i++
	if p.i < len(p.b) && p.b[p.i] == closing {
		p.i++
		return true
	}
	for {
		if !member() {
			return false
		}
		if more, ok := p.after(closing); !more {
			return ok
		}
	}
}

// after reads what follows a member of an object or an array: a comma
// (more is true) or the closing byte (ok is true). Anything else is not
// valid JSON: both are false.
func (p *asIsParser) after(closing byte) (more, ok bool) {
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

// str reads a string starting at its opening quote.
func (p *asIsParser) str() bool {
	p.i++ // the quote
	for p.i < len(p.b) {
		c := p.b[p.i]
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
				for _, h := range p.b[p.i+1 : p.i+5] {
					if !isHex(h) {
						return false
					}
				}
				p.i += 5
			default:
				return false
			}
		case c < 0x20 || c == '<' || c == '>' || c == '&':
			return false
		case c == 0xE2 && p.i+2 < len(p.b) && p.b[p.i+1] == 0x80 && p.b[p.i+2]&^1 == 0xA8:
			return false // U+2028, U+2029: Marshal escapes them
		default:
			p.i++
		}
	}
	return false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *asIsParser) number() bool {
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
func (p *asIsParser) digits() int {
	n := 0
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
		n++
	}
	return n
}

func (p *asIsParser) literal(lit string) bool {
	if len(p.b)-p.i < len(lit) || string(p.b[p.i:p.i+len(lit)]) != lit {
		return false
	}
	p.i += len(lit)
	return true
}
