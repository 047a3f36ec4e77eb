package jsonform

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// AppendParams appends the JSON encoding of a parameter map to dst:
// exactly the bytes json.Marshal(m) gives (keys sorted, HTML characters
// escaped, null for a nil map), and Marshal's error for a value it cannot
// encode. JSON's own types (string, float64, bool, nil, map[string]any,
// []any) are written directly, without reflection and without the sorted
// key list Marshal allocates (strings by AppendString); any other value,
// and the rare number that needs an exponent, is written by json.Marshal.
func AppendParams(dst []byte, m map[string]any) ([]byte, error) {
	return appendObject(dst, m, 0)
}

// MarshalParams is AppendParams into a buffer sized for m's encoding
// (when nothing needs escaping), so writing it takes one allocation.
func MarshalParams(m map[string]any) ([]byte, error) {
	return AppendParams(make([]byte, 0, sizeHint(m, 0)), m)
}

// sizeHint is at least the length of v's encoding when no string needs
// escaping and no number takes more than 24 bytes.
func sizeHint(v any, depth int) int {
	if depth > maxDepth {
		return 0
	}
	switch v := v.(type) {
	case nil:
		return len("null")
	case bool:
		return len("false")
	case string:
		return len(v) + 2
	case map[string]any:
		n := 2
		for k, e := range v {
			n += len(k) + 4 + sizeHint(e, depth+1)
		}
		return n
	case []any:
		n := 2
		for _, e := range v {
			n += 1 + sizeHint(e, depth+1)
		}
		return n
	}
	return 24
}

// maxDepth is the nesting past which a value is left to json.Marshal,
// which refuses a cycle instead of recursing without end.
const maxDepth = 100

func appendObject(dst []byte, m map[string]any, depth int) ([]byte, error) {
	if m == nil {
		return append(dst, "null"...), nil
	}
	var buf [16]string
	keys := buf[:0]
	if len(m) > len(buf) {
		keys = make([]string, 0, len(m))
	}
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	dst = append(dst, '{')
	var err error
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendString(dst, k)
		dst = append(dst, ':')
		if dst, err = appendValue(dst, m[k], depth+1); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

func appendValue(dst []byte, v any, depth int) ([]byte, error) {
	if depth > maxDepth {
		return appendMarshal(dst, v)
	}
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		return strconv.AppendBool(dst, v), nil
	case string:
		return AppendString(dst, v), nil
	case float64:
		// Marshal writes 'f' form between 1e-6 and 1e21 (and for zero),
		// an exponent outside.
		if a := math.Abs(v); a == 0 || a >= 1e-6 && a < 1e21 {
			return strconv.AppendFloat(dst, v, 'f', -1, 64), nil
		}
	case map[string]any:
		return appendObject(dst, v, depth)
	case []any:
		if v == nil {
			return append(dst, "null"...), nil
		}
		dst = append(dst, '[')
		var err error
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = appendValue(dst, e, depth+1); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	}
	return appendMarshal(dst, v)
}

func appendMarshal(dst []byte, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

const hexDigits = "0123456789abcdef"

// AppendString appends s as json.Marshal writes a string: quoted, with
// <, > and & escaped (HTML-safe), invalid UTF-8 replaced by U+FFFD and
// U+2028, U+2029 escaped. Runs of bytes that need nothing are copied
// whole; it never allocates but to grow dst.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if htmlSafe[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default: // other control bytes, <, >, &
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case c == '\u2028' || c == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// htmlSafe[b] says encoding/json writes ASCII byte b in a string as it is.
var htmlSafe = func() (t [utf8.RuneSelf]bool) {
	for b := range utf8.RuneSelf {
		t[b] = b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
	}
	return t
}()
