package prompts

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"unicode/utf8"
)

// object is a JSON object that keeps its keys in the order given. Models
// with native structured output write the keys in the schema's order, so
// the stage schemas list them in the order DESIGN §3 gives.
type object []member

type member struct {
	key   string
	value any
}

// MarshalJSON writes the members in order, without HTML escaping.
func (o object) MarshalJSON() ([]byte, error) { return marshal(o) }

// marshal encodes a schema value: objects, lists, maps (keys sorted),
// strings (not HTML-escaped: descriptions and patterns are sent as
// written), booleans, null, raw JSON and numbers. Schemas are built on
// every stage call, so it writes into one buffer instead of letting
// encoding/json re-validate each nested MarshalJSON.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := appendValue(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func appendValue(b *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case object:
		b.WriteByte('{')
		for i, m := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			appendString(b, m.key)
			b.WriteByte(':')
			if err := appendValue(b, m.value); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case map[string]any:
		b.WriteByte('{')
		for i, k := range slices.Sorted(maps.Keys(x)) {
			if i > 0 {
				b.WriteByte(',')
			}
			appendString(b, k)
			b.WriteByte(':')
			if err := appendValue(b, x[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := appendValue(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case []string:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			appendString(b, e)
		}
		b.WriteByte(']')
	case string:
		appendString(b, x)
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case nil:
		b.WriteString("null")
	case json.RawMessage:
		b.Write(x)
	default:
		data, err := json.Marshal(x)
		if err != nil {
			return err
		}
		b.Write(data)
	}
	return nil
}

// appendString writes s as a JSON string: quotes, backslashes and control
// characters escaped, everything else as is (invalid UTF-8 is replaced).
func appendString(b *bytes.Buffer, s string) {
	if !utf8.ValidString(s) {
		s = string([]rune(s)) // each invalid byte becomes U+FFFD
	}
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xf])
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
}
