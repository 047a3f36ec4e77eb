package redisstore

import (
	"bytes"
	"hash/maphash"
	"strconv"
	"strings"
	"sync"

	"github.com/twostep/twostep/workflow"
	"github.com/twostep/twostep/workflow/jsonform"
)

// A trace is the largest value a commit stores (both prompts in full), and
// encoding/json spends most of its time on one in reflection and in
// re-validating the Parsed reply. appendTrace writes the same bytes as
// json.Marshal without either; TestAppendTraceIsMarshal holds the two
// equal, field by field and on fuzzed values, and fails when Trace gains
// a field this encoder does not write.

// appendTrace appends t's JSON, byte for byte what json.Marshal gives, to
// dst. It reports false, with dst unchanged, for a trace it leaves to
// encoding/json: one whose Parsed is not valid JSON already in the form
// Marshal would give it (compact, nothing Marshal escapes), or whose time
// Marshal refuses.
func appendTrace(dst []byte, t *workflow.Trace) ([]byte, bool) {
	start := len(dst)
	if len(t.Parsed) > 0 && !compactAsIs(t.Parsed) {
		return dst, false
	}
	str := func(key, v string) {
		dst = append(dst, key...)
		dst = jsonform.AppendString(dst, v)
	}
	num := func(key string, v int64) {
		dst = append(dst, key...)
		dst = strconv.AppendInt(dst, v, 10)
	}
	str(`{"id":`, t.ID)
	str(`,"workflowId":`, t.WorkflowID)
	num(`,"round":`, int64(t.Round))
	num(`,"step":`, int64(t.Step))
	str(`,"stage":`, string(t.Stage))
	num(`,"attempt":`, int64(t.Attempt))
	str(`,"template":`, t.Template)
	dst = append(dst, `,"prompt":`...)
	if t.Prompt == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '[')
		for i, m := range t.Prompt {
			if i > 0 {
				dst = append(dst, ',')
			}
			str(`{"role":`, m.Role)
			dst = append(dst, `,"content":`...)
			dst = promptEncodings.appendString(dst, m.Content)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	str(`,"response":`, t.Response)
	if len(t.Parsed) > 0 {
		dst = append(dst, `,"parsed":`...)
		dst = append(dst, t.Parsed...)
	}
	str(`,"error":`, t.Error)
	str(`,"model":`, t.Model)
	num(`,"promptTokens":`, int64(t.PromptTokens))
	num(`,"completionTokens":`, int64(t.CompletionTokens))
	num(`,"latencyMs":`, t.LatencyMs)
	if t.FinishReason != "" {
		str(`,"finishReason":`, t.FinishReason)
	}
	if t.Retries != 0 {
		num(`,"retries":`, int64(t.Retries))
	}
	if t.OutputMode != "" {
		str(`,"outputMode":`, string(t.OutputMode))
	}
	dst = append(dst, `,"createdAt":"`...)
	// Time.MarshalJSON is AppendText quoted; its output needs no escaping.
	b, err := t.CreatedAt.AppendText(dst)
	if err != nil {
		return dst[:start], false
	}
	return append(b, `"}`...), true
}

// promptEncodings caches the encodings of long prompt messages: a template's
// system message is the same text on every call of its stage, and
// escaping it is most of a trace's encoding. It may keep a prompt's
// (redacted) text in memory after its workflow is deleted, until another
// string displaces it; a hit needs the exact same string, so it never
// hands one trace another's text.
var promptEncodings encCache

// encCache remembers the JSON encodings of recent long strings, in
// encCacheSlots slots picked by the string's hash. A slot takes a string
// the second time in a row it sees the string miss, and keeps it until
// another string misses twice in a row there: text that changes on every
// call (a user message with the history) is never copied and never
// displaces a system message. Strings shorter than minCached or longer
// than maxCached, and encodings longer than 2 × maxCached, are never kept:
// the cache holds at most encCacheSlots × 3 × maxCached bytes.
type encCache struct {
	mu    sync.Mutex
	slots [encCacheSlots]encEntry
}

type encEntry struct {
	hash    uint64 // of s
	s       string // "" for none
	enc     []byte // jsonform.AppendString(nil, s)
	pending uint64 // the hash of the slot's last miss
}

const (
	encCacheSlots = 32
	minCached     = 512
	maxCached     = 16 << 10
)

var encSeed = maphash.MakeSeed()

// appendString appends jsonform.AppendString(dst, s), copied from the cache when
// it holds s.
func (c *encCache) appendString(dst []byte, s string) []byte {
	if len(s) < minCached || len(s) > maxCached {
		return jsonform.AppendString(dst, s)
	}
	h := maphash.String(encSeed, s)
	slot := &c.slots[h%encCacheSlots]
	c.mu.Lock()
	e := *slot
	if e.hash != h || e.s != s {
		slot.pending = h
	}
	c.mu.Unlock()
	if e.s != "" && e.hash == h && e.s == s {
		return append(dst, e.enc...)
	}
	start := len(dst)
	dst = jsonform.AppendString(dst, s)
	if e.pending == h && len(dst)-start <= 2*maxCached { // its second miss in a row here: keep it
		next := encEntry{hash: h, s: strings.Clone(s), enc: bytes.Clone(dst[start:])}
		c.mu.Lock()
		*slot = next
		c.mu.Unlock()
	}
	return dst
}

// maxAsIsDepth bounds the nesting compactAsIs follows; deeper values are
// left to encoding/json.
const maxAsIsDepth = 64

// compactAsIs reports whether json.Marshal writes raw JSON b (a
// json.RawMessage) exactly as it is: b is one valid JSON value, without
// whitespace between tokens, holding no byte Marshal escapes in raw JSON
// (<, >, &, U+2028, U+2029). False may also mean "not sure" (nesting past
// maxAsIsDepth): the caller then leaves b to encoding/json.
func compactAsIs(b []byte) bool {
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
