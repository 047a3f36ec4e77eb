package redisstore

import (
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/twostep/twostep/workflow"
	"github.com/twostep/twostep/workflow/jsonform"
)

// stateReader reads the form appendWorkflow writes from s. Each field
// method takes the key with the punctuation before its value (`,"name":`,
// or "" when the caller has read it already). Input it does not read as
// json.Unmarshal would clears ok; what it returns after that is thrown
// away.
type stateReader struct {
	s  string
	b  []byte // the same bytes as s, for what reads bytes
	i  int
	ok bool
}

// has reads p when the input goes on with it.
func (r *stateReader) has(p string) bool {
	if r.ok && len(r.s)-r.i >= len(p) && r.s[r.i:r.i+len(p)] == p {
		r.i += len(p)
		return true
	}
	return false
}

// expect reads p, or clears ok.
func (r *stateReader) expect(p string) {
	if !r.has(p) {
		r.ok = false
	}
}

// str reads a string value after key.
func (r *stateReader) str(key string) string {
	r.expect(key)
	if !r.ok || r.i >= len(r.s) || r.s[r.i] != '"' {
		r.ok = false
		return ""
	}
	start := r.i + 1
	for i := start; i < len(r.s); i++ {
		switch c := r.s[i]; {
		case c == '"':
			r.i = i + 1
			return r.s[start:i]
		case c == '\\':
			return r.unquote(start)
		case c < ' ':
			r.ok = false
			return ""
		case c >= utf8.RuneSelf:
			// json.Unmarshal replaces invalid UTF-8, which Marshal never
			// writes: leave it to Unmarshal.
			c, size := utf8.DecodeRuneInString(r.s[i:])
			if c == utf8.RuneError && size == 1 {
				r.ok = false
				return ""
			}
			i += size - 1
		}
	}
	r.ok = false
	return ""
}

// unquote reads the rest of a string that holds an escape, from its
// first byte at start, as json.Unmarshal does; it leaves to Unmarshal a
// surrogate escape (Marshal writes none), invalid UTF-8 and anything
// that is not valid JSON.
func (r *stateReader) unquote(start int) string {
	b := make([]byte, 0, len(r.s)-start)
	for i := start; i < len(r.s); {
		c := r.s[i]
		switch {
		case c == '"':
			r.i = i + 1
			return string(b)
		case c < ' ':
			r.ok = false
			return ""
		case c == '\\':
			if i+1 >= len(r.s) {
				r.ok = false
				return ""
			}
			switch e := r.s[i+1]; e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				if i+6 > len(r.s) {
					r.ok = false
					return ""
				}
				n, err := strconv.ParseUint(r.s[i+2:i+6], 16, 16)
				if err != nil || utf16.IsSurrogate(rune(n)) {
					r.ok = false
					return ""
				}
				b = utf8.AppendRune(b, rune(n))
				i += 6
				continue
			default:
				r.ok = false
				return ""
			}
			i += 2
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			c, size := utf8.DecodeRuneInString(r.s[i:])
			if c == utf8.RuneError && size == 1 {
				r.ok = false
				return ""
			}
			b = append(b, r.s[i:i+size]...)
			i += size
		}
	}
	r.ok = false
	return ""
}

// strs reads a []string after key: nil for null.
func (r *stateReader) strs(key string) []string {
	r.expect(key)
	if r.has("null") {
		return nil
	}
	r.expect("[")
	ss := []string{}
	for r.ok && !r.has("]") {
		if len(ss) > 0 {
			r.expect(",")
		}
		ss = append(ss, r.str(""))
	}
	return ss
}

// int64 reads an integer after key: -?(0|[1-9][0-9]*), in range.
func (r *stateReader) int64(key string) int64 {
	r.expect(key)
	if !r.ok {
		return 0
	}
	start := r.i
	if r.i < len(r.s) && r.s[r.i] == '-' {
		r.i++
	}
	digits := r.i
	for r.i < len(r.s) && r.s[r.i] >= '0' && r.s[r.i] <= '9' {
		r.i++
	}
	if r.i == digits || r.s[digits] == '0' && r.i > digits+1 {
		r.ok = false // no digits, or a leading zero: not JSON
		return 0
	}
	n, err := strconv.ParseInt(r.s[start:r.i], 10, 64)
	if err != nil {
		r.ok = false
	}
	return n
}

// int reads an int after key.
func (r *stateReader) int(key string) int {
	n := r.int64(key)
	if int64(int(n)) != n {
		r.ok = false
	}
	return int(n)
}

// time reads a time after key with Time.UnmarshalJSON, as json.Unmarshal
// does (a JSON null would leave the time unchanged: not read here).
func (r *stateReader) time(key string) time.Time {
	r.expect(key)
	var t time.Time
	start := r.i
	if r.str("") == "" || !r.ok { // an empty time is refused by UnmarshalJSON too
		r.ok = false
		return t
	}
	if err := t.UnmarshalJSON(r.b[start:r.i]); err != nil {
		r.ok = false
	}
	return t
}

// params reads a parameter map after key with json.Unmarshal, having found
// its end with jsonform.CompactAsIsPrefix (compact JSON, which is what
// Marshal writes).
func (r *stateReader) params(key string) map[string]any {
	r.expect(key)
	if !r.ok {
		return nil
	}
	if r.has("null") {
		return nil
	}
	if r.i >= len(r.s) || r.s[r.i] != '{' {
		r.ok = false
		return nil
	}
	n, ok := jsonform.CompactAsIsPrefix(r.b[r.i:])
	if !ok {
		r.ok = false
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(r.b[r.i:r.i+n], &m); err != nil {
		r.ok = false
	}
	r.i += n
	return m
}

// stageTable reads Stats.ByStage after key: null, or an object of stages'
// counts each in StageStats's field order (built as UnmarshalJSON builds
// it, from a map).
func (r *stateReader) stageTable(key string) workflow.StageTable {
	r.expect(key)
	if r.has("null") {
		return workflow.StageTable{}
	}
	r.expect("{")
	m := make(map[workflow.Stage]workflow.StageStats, 6)
	for first := true; r.ok && !r.has("}"); first = false {
		if !first {
			r.expect(",")
		}
		s := workflow.Stage(r.str(""))
		var v workflow.StageStats
		v.Calls = r.int(`:{"calls":`)
		v.PromptTokens = r.int(`,"promptTokens":`)
		v.CompletionTokens = r.int(`,"completionTokens":`)
		if r.has(`,"cachedTokens":`) { // absent from states stored before it existed
			v.CachedTokens = r.int("")
		}
		r.expect("}")
		m[s] = v
	}
	return workflow.StageTableOf(m)
}
