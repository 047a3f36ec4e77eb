package prompts

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// The helpers here read the members of a reply that ExtractObject has
// already validated, without decoding it again: members are sub-slices of
// the reply, and a plain string member (no escapes, valid UTF-8) is copied
// out as it is. Each does exactly what the encoding/json call it replaces
// does, and hands anything out of the ordinary (escapes, invalid UTF-8, a
// value of another kind) to that very call, so their results never differ.

// rawMember is one member of a JSON object, its value as written.
type rawMember struct {
	key   string
	value json.RawMessage
}

// rawObject is a JSON object's members in the order written; a key written
// twice is there twice, and get takes the last, as a decoded map does.
type rawObject []rawMember

// get returns the value of the last member named key.
func (o rawObject) get(key string) (json.RawMessage, bool) {
	for i := len(o) - 1; i >= 0; i-- {
		if o[i].key == key {
			return o[i].value, true
		}
	}
	return nil, false
}

// getFold returns the value of the last member whose key matches key as
// encoding/json matches a struct field's name: exactly or case-insensitively
// (bytes.EqualFold).
func (o rawObject) getFold(key string) json.RawMessage {
	for i := len(o) - 1; i >= 0; i-- {
		if bytes.EqualFold([]byte(o[i].key), []byte(key)) {
			return o[i].value
		}
	}
	return nil
}

// splitObject returns the members of raw, a valid JSON value, when it is
// an object (ok false otherwise: null, another kind, or a text this
// scanner does not take, which the caller then decodes with encoding/json).
// The members are appended to buf[:0] (a caller's stack array keeps a
// small object off the heap).
func splitObject(raw []byte, buf rawObject) (obj rawObject, ok bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil, false
	}
	obj = buf[:0]
	if obj == nil {
		obj = rawObject{}
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return obj, skipSpace(raw, i+1) == len(raw)
	}
	for {
		if i >= len(raw) || raw[i] != '"' {
			return nil, false
		}
		end := stringEnd(raw, i)
		if end < 0 {
			return nil, false
		}
		key, known := knownKey(raw[i:end])
		if !known {
			var set bool
			if key, set, _ = decodeString(raw[i:end]); !set {
				return nil, false
			}
		}
		i = skipSpace(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return nil, false
		}
		i = skipSpace(raw, i+1)
		vend := valueEnd(raw, i)
		if vend < 0 {
			return nil, false
		}
		obj = append(obj, rawMember{key: key, value: raw[i:vend]})
		i = skipSpace(raw, vend)
		if i >= len(raw) {
			return nil, false
		}
		if raw[i] == '}' {
			return obj, skipSpace(raw, i+1) == len(raw)
		}
		if raw[i] != ',' {
			return nil, false
		}
		i = skipSpace(raw, i+1)
	}
}

// splitArray returns the elements of raw, a valid JSON value, when it is
// an array (ok false otherwise), appended to buf[:0].
func splitArray(raw []byte, buf []json.RawMessage) (items []json.RawMessage, ok bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return nil, false
	}
	items = buf[:0]
	if items == nil {
		items = []json.RawMessage{}
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == ']' {
		return items, skipSpace(raw, i+1) == len(raw)
	}
	for {
		end := valueEnd(raw, i)
		if end < 0 {
			return nil, false
		}
		items = append(items, raw[i:end])
		i = skipSpace(raw, end)
		if i >= len(raw) {
			return nil, false
		}
		if raw[i] == ']' {
			return items, skipSpace(raw, i+1) == len(raw)
		}
		if raw[i] != ',' {
			return nil, false
		}
		i = skipSpace(raw, i+1)
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index after the string that starts at b[i] (a
// quote), or -1 when it does not end.
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// valueEnd returns the index after the value that starts at b[i], or -1.
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end := stringEnd(b, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

// unmarshalString is json.Unmarshal(raw, s) == nil for a valid JSON value
// raw: a plain string is copied out directly; anything else (escapes,
// invalid UTF-8, another kind, nothing) goes to json.Unmarshal. s does not
// escape (json.Unmarshal would move every caller's variable to the heap).
func unmarshalString(raw []byte, s *string) bool {
	v, set, ok := decodeString(raw)
	if set {
		*s = v
	}
	return ok
}

// decodeString decodes the JSON value raw into a string as json.Unmarshal
// does: ok is whether that succeeds, set whether it sets the string (null
// leaves it as it was).
func decodeString(raw []byte) (v string, set, ok bool) {
	if len(raw) == 0 {
		return "", false, false
	}
	switch raw[0] {
	case '{', '[', 't', 'f', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return "", false, false // a valid value of another kind: never a string
	}
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' {
		inner := raw[1 : n-1]
		if bytes.IndexByte(inner, '\\') < 0 && bytes.IndexByte(inner, '"') < 0 && utf8.Valid(inner) && !hasControl(inner) {
			return string(inner), true, true
		}
	}
	if isNull(raw) {
		return "", false, true
	}
	var x string
	if json.Unmarshal(raw, &x) != nil {
		return "", false, false
	}
	return x, true, true
}

// knownKeys are the keys the stage replies use (knownKey).
var knownKeys = [...]string{
	"action", "actionObjective", "parametersContext", "parametersSchema", "learnings",
	"requiredInputDocuments", "requiredConnection", "fields", "name", "type", "required",
	"description", "schema", "parameters",
}

// knownKey returns the key a plain JSON string token spells when it is
// one of the keys the stage replies use, without allocating it.
func knownKey(tok []byte) (string, bool) {
	if len(tok) < 2 {
		return "", false
	}
	k := tok[1 : len(tok)-1]
	for _, known := range knownKeys {
		if string(k) == known { // compared in place, not converted
			return known, true
		}
	}
	return "", false
}

// unmarshalBool is json.Unmarshal(raw, v) == nil for a valid JSON value
// raw; v does not escape.
func unmarshalBool(raw []byte, v *bool) bool {
	switch string(raw) {
	case "true":
		*v = true
		return true
	case "false":
		*v = false
		return true
	}
	var x bool
	if isNull(raw) || json.Unmarshal(raw, &x) != nil {
		return isNull(raw) // null leaves v as it was
	}
	*v = x
	return true
}

func hasControl(b []byte) bool {
	for _, c := range b {
		if c < 0x20 {
			return true
		}
	}
	return false
}

// isNull reports whether raw is the JSON null.
func isNull(raw json.RawMessage) bool {
	return string(bytes.TrimSpace(raw)) == "null"
}
