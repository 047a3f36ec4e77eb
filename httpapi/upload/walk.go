package upload

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// The JSON walker: the transcoder reads the body one token at a time,
// copying every byte to out, and descends only into the root object, its
// documents array and each document's object; every other value is
// skipped (copied without looking inside it).

// readByte consumes one byte of the body, counting it in read.
func (t *transcoder) readByte() (byte, error) {
	b, err := t.in.ReadByte()
	if err == nil {
		t.read++
	}
	return b, err
}

// peek returns the next byte without consuming it.
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

// root walks the body's top-level object: each documents array element
// that is an object is walked by document, everything else is skipped.
// More than maxDocs documents stop the read with a *ShapeError.
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

// document walks documents[i]: its content string, when it is one, is
// decoded into the stash as document i; other members are skipped.
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

// skipOr returns err when there is one, else skips the next value.
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
