package prompts

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kaptinlin/jsonrepair"
	"github.com/twostep/twostep/workflow"
)

// MaxReplyBytes caps a model reply before any parsing work (64 KiB).
const MaxReplyBytes = 64 << 10

// MaxRepairBytes caps the JSON handed to the repair library, whose
// worst case grows faster than linearly (a 64 KiB adversarial reply takes
// seconds). Larger replies must be valid JSON, or JSON whose only defect is
// trailing commas.
const MaxRepairBytes = 8 << 10

// MaxDepth bounds the nesting of brackets in a reply; deeper replies are
// rejected before any decoding or repair.
const MaxDepth = 64

// ExtractJSON finds the JSON value in a model reply and returns it as
// valid, compact JSON. It accepts a bare value, a value inside a Markdown
// code fence, or one wrapped in prose: the first balanced {...} or [...]
// (outside strings) is taken; an unbalanced one is taken to the end and
// left to repair. Malformed JSON (trailing commas, single quotes, comments,
// missing brackets) is repaired: trailing commas in one linear pass, the
// rest with github.com/kaptinlin/jsonrepair for values up to
// MaxRepairBytes.
// A reply over MaxReplyBytes, or one with no JSON value, is an error of
// kind KindInvalid saying so.
func ExtractJSON(reply string) (json.RawMessage, error) {
	return extract(reply, "{[")
}

// ExtractObject is ExtractJSON for replies that must hold an object: only
// a "{" starts a candidate, so a bracket in the surrounding prose is
// never mistaken for the value.
//
// A reply that is a bare array (after fences and leading space) is
// rejected rather than mined for its first element: Stage 1 and Stage 2
// each expect exactly one object.
func ExtractObject(reply string) (json.RawMessage, error) {
	if len(reply) <= MaxReplyBytes && strings.HasPrefix(strings.TrimSpace(unfence(reply)), "[") {
		return nil, workflow.Errorf(workflow.KindInvalid, "the reply must be one JSON object, got an array")
	}
	return extract(reply, "{")
}

// maxCandidates bounds how many start positions extract tries before it
// falls back to repairing the first candidate.
const maxCandidates = 16

func extract(reply, openers string) (json.RawMessage, error) {
	if len(reply) > MaxReplyBytes {
		return nil, workflow.Errorf(workflow.KindInvalid, "the reply is %d bytes, more than the limit of %d", len(reply), MaxReplyBytes)
	}
	text := unfence(reply)
	first := ""
	for i, n := 0, 0; n < maxCandidates; n++ {
		j := strings.IndexAny(text[i:], openers)
		if j < 0 {
			break
		}
		c := balanced(text[i+j:])
		if first == "" {
			first = c
		}
		if out, err := compact(c); err == nil { // Compact validates as it goes
			return out, nil
		}
		// Continue after this candidate: a value nested inside it is
		// never taken for the reply.
		i += j + len(c)
	}
	if first == "" {
		return nil, workflow.Errorf(workflow.KindInvalid, "the reply contains no JSON value")
	}
	if fixed := stripTrailingCommas(first); json.Valid([]byte(fixed)) {
		return compact(fixed)
	}
	if depth(first) > MaxDepth {
		return nil, workflow.Errorf(workflow.KindInvalid, "the reply's JSON nests deeper than %d levels", MaxDepth)
	}
	if len(first) > MaxRepairBytes {
		return nil, workflow.Errorf(workflow.KindInvalid, "the reply's JSON is invalid and, at %d bytes, too large to repair (limit %d): send valid JSON", len(first), MaxRepairBytes)
	}
	repaired, err := jsonrepair.Repair(first)
	if err != nil || !json.Valid([]byte(repaired)) {
		return nil, workflow.Errorf(workflow.KindInvalid, "the reply is not valid JSON and could not be repaired: %s", repairReason(err))
	}
	return compact(repaired)
}

// stripTrailingCommas removes every comma that, outside strings and
// ignoring whitespace, is followed by "}" or "]" — the most common defect
// of model JSON — in one linear pass.
func stripTrailingCommas(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	last := 0 // s[last:] is not written yet
	eachStructural(s, func(i int) bool {
		if s[i] != ',' {
			return true
		}
		j := i + 1
		for j < len(s) && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n' || s[j] == '\r') {
			j++
		}
		if j < len(s) && (s[j] == '}' || s[j] == ']') {
			b.WriteString(s[last:i])
			last = i + 1
		}
		return true
	})
	b.WriteString(s[last:])
	return b.String()
}

func repairReason(err error) string {
	if err == nil {
		return "the repaired text is still invalid"
	}
	return err.Error()
}

// compact returns s without the whitespace between its tokens, or
// KindInvalid when it is not valid JSON.
func compact(s string) (json.RawMessage, error) {
	var b bytes.Buffer
	b.Grow(len(s))
	if err := json.Compact(&b, []byte(s)); err != nil {
		return nil, workflow.WrapKind(workflow.KindInvalid, err, "the reply is not valid JSON")
	}
	return b.Bytes(), nil
}

// unfence returns the body of the first ``` code fence that holds a "{" or
// "[", or s when there is none.
func unfence(s string) string {
	rest := s
	for {
		i := strings.Index(rest, "```")
		if i < 0 {
			return s
		}
		body := rest[i+3:]
		// Skip the info string ("json") up to the end of the line.
		// Skip the info string ("json") up to the end of the line; an info
		// string is short, so only the first bytes are searched.
		if nl := strings.IndexByte(body[:min(len(body), 32)], '\n'); nl >= 0 && !strings.ContainsAny(body[:nl], "{[") {
			body = body[nl+1:]
		}
		end := strings.Index(body, "```")
		inner := body
		if end >= 0 {
			inner = body[:end]
		}
		if strings.ContainsAny(inner, "{[") {
			return inner
		}
		if end < 0 {
			return s
		}
		rest = body[end+3:]
	}
}

// balanced returns the balanced JSON object or array that starts s, scanning
// strings and escapes so brackets inside strings do not count. When the
// value never closes, it returns everything from its start.
func balanced(s string) string {
	end := len(s)
	walkBrackets(s, func(i int, c byte, depth int) bool {
		if (c == '}' || c == ']') && depth == 0 {
			end = i + 1
			return false
		}
		return true
	})
	return s[:end]
}

// walkBrackets calls visit for every bracket of s outside JSON strings,
// with its index, the bracket and the nesting depth after it; visit
// returns false to stop the walk.
func walkBrackets(s string, visit func(i int, c byte, depth int) bool) {
	depth := 0
	eachStructural(s, func(i int) bool {
		switch c := s[i]; c {
		case '{', '[':
			depth++
			return visit(i, c, depth)
		case '}', ']':
			depth--
			return visit(i, c, depth)
		}
		return true
	})
}

// eachStructural calls visit with the index of every byte of s outside
// JSON strings (string contents, their quotes and escapes excluded); visit
// returns false to stop. It is the one place that knows JSON's string and
// escape rules for the scanners here.
func eachStructural(s string, visit func(i int) bool) {
	inString, escaped := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case escaped:
			escaped = false
		case inString:
			if c == '\\' {
				escaped = true
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		default:
			if !visit(i) {
				return
			}
		}
	}
}

// decodeObject decodes raw into a map of its top-level members, or returns
// a problem line saying the reply is not a JSON object.
// raw is ExtractObject's valid JSON; its members are read in place
// (splitObject), or decoded with encoding/json when the scanner does not
// take the text.
func decodeObject(raw json.RawMessage, buf rawObject) (rawObject, error) {
	if obj, ok := splitObject(raw, buf); ok {
		return obj, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, fmt.Errorf("the reply must be one JSON object, got %s", JSONKind(raw))
	}
	obj := make(rawObject, 0, len(m))
	for k, v := range m {
		obj = append(obj, rawMember{key: k, value: v})
	}
	return obj, nil
}

// JSONKind names the kind of a JSON value ("an object", "a string", ...)
// for problem lines fed back to a model.
func JSONKind(raw json.RawMessage) string {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return "nothing"
	}
	switch t[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// depth returns the deepest bracket nesting of s outside strings.
func depth(s string) int {
	deepest := 0
	walkBrackets(s, func(_ int, _ byte, d int) bool {
		deepest = max(deepest, d)
		return true
	})
	return deepest
}
