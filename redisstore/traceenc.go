package redisstore

import (
	"bytes"
	"hash/maphash"
	"maps"
	"slices"
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
	if len(t.Parsed) > 0 && !jsonform.CompactAsIs(t.Parsed) {
		return dst, false
	}
	e := jsonWriter{b: dst, ok: true}
	e.str(`{"id":`, t.ID)
	e.str(`,"workflowId":`, t.WorkflowID)
	e.num(`,"round":`, int64(t.Round))
	e.num(`,"step":`, int64(t.Step))
	e.str(`,"stage":`, string(t.Stage))
	e.num(`,"attempt":`, int64(t.Attempt))
	e.str(`,"template":`, t.Template)
	e.inputs(t.Inputs)
	e.b = append(e.b, `,"prompt":`...)
	if t.Prompt == nil {
		e.b = append(e.b, "null"...)
	} else {
		e.b = append(e.b, '[')
		for i, m := range t.Prompt {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.str(`{"role":`, m.Role)
			e.b = promptEncodings.appendString(append(e.b, `,"content":`...), m.Content)
			e.b = append(e.b, '}')
		}
		e.b = append(e.b, ']')
	}
	e.str(`,"response":`, t.Response)
	if len(t.Parsed) > 0 {
		e.b = append(append(e.b, `,"parsed":`...), t.Parsed...)
	}
	e.str(`,"error":`, t.Error)
	e.str(`,"model":`, t.Model)
	e.num(`,"promptTokens":`, int64(t.PromptTokens))
	e.num(`,"completionTokens":`, int64(t.CompletionTokens))
	e.num(`,"cachedTokens":`, int64(t.CachedTokens))
	e.optNum(`,"cacheWriteTokens":`, int64(t.CacheWriteTokens))
	e.num(`,"latencyMs":`, t.LatencyMs)
	e.optStr(`,"finishReason":`, t.FinishReason)
	e.optNum(`,"retries":`, int64(t.Retries))
	e.optStr(`,"outputMode":`, string(t.OutputMode))
	if len(t.Ungrounded) > 0 {
		e.strs(`,"ungrounded":`, t.Ungrounded)
	}
	e.time(`,"createdAt":`, t.CreatedAt)
	e.b = append(e.b, '}')
	return e.result(len(dst))
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

// inputs writes Trace.Inputs as json.Marshal does (omitted when empty,
// keys sorted).
func (e *jsonWriter) inputs(m map[string]string) {
	if len(m) == 0 {
		return
	}
	e.b = append(e.b, `,"inputs":{`...)
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.b = append(jsonform.AppendString(e.b, k), ':')
		e.b = jsonform.AppendString(e.b, m[k])
	}
	e.b = append(e.b, '}')
}
