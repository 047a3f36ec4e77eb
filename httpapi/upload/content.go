package upload

import (
	"unicode/utf16"
	"unicode/utf8"
)

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
