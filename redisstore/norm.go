package redisstore

import (
	"encoding/json"
	"math"
	"time"
	"unicode/utf8"

	"github.com/twostep/twostep/workflow"
)

// Commit hands back the messages as a read would decode them. Decoding
// each message's encoding again just for that cost more than encoding
// it, so storedMessage shapes the message as the JSON round trip would
// instead (as memstore's clone.go does for everything it keeps): invalid
// UTF-8 replaced, parameter values as JSON types (float64, []any,
// map[string]any), empty omitempty fields nil, times without their
// monotonic reading and in the location a decoded time gets. What it does
// not copy itself (numbers other than float64, typed values, keys that
// are not valid UTF-8, times with an offset) takes the real round trip.
// TestStoredMessageIsJSONRoundTrip holds the two equal.

// shaper carries the first error met while shaping a value.
type shaper struct{ err error }

func (n *shaper) fail(err error) {
	if n.err == nil {
		n.err = err
	}
}

// jsonStr returns s as JSON would decode its encoding: each byte of an
// invalid UTF-8 sequence replaced by U+FFFD. s itself when valid.
func jsonStr[S ~string](s S) S {
	if utf8.ValidString(string(s)) {
		return s
	}
	b := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(string(s[i:]))
		if r == utf8.RuneError && size == 1 {
			b = utf8.AppendRune(b, utf8.RuneError)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return S(b)
}

// tm returns t as JSON would decode its encoding.
func (n *shaper) tm(t time.Time) time.Time {
	if _, off := t.Zone(); off == 0 {
		if y := t.Year(); y >= 0 && y <= 9999 {
			return t.UTC()
		}
	}
	// Another offset (decoded as time.Local when it has that offset, else
	// as a fixed zone) or an out-of-range year (an error): the real round
	// trip.
	b, err := t.MarshalJSON()
	if err != nil {
		n.fail(err)
		return t
	}
	var out time.Time
	if err := out.UnmarshalJSON(b); err != nil {
		n.fail(err)
		return t
	}
	return out
}

// params returns a shaped copy of a parameter map; omitEmpty says the
// field has omitempty (an empty map then decodes as nil).
func (n *shaper) params(m map[string]any, omitEmpty bool) map[string]any {
	if m == nil || len(m) == 0 && omitEmpty {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		if !utf8.ValidString(k) {
			// Two keys could become one: let JSON decide.
			r, _ := n.roundTrip(m).(map[string]any)
			return r
		}
		out[k] = n.value(v)
	}
	return out
}

// value returns a shaped copy of a parameter value: JSON's own types are
// copied, anything else takes the real round trip.
func (n *shaper) value(v any) any {
	switch v := v.(type) {
	case nil, bool:
		return v
	case string:
		return jsonStr(v)
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return n.roundTrip(v) // Marshal's error
		}
		return v
	case map[string]any:
		if v == nil {
			return nil // null decodes as a nil interface
		}
		return n.params(v, false)
	case []any:
		if v == nil {
			return nil
		}
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = n.value(e)
		}
		return out
	}
	return n.roundTrip(v)
}

// roundTrip is the JSON round trip of v.
func (n *shaper) roundTrip(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		n.fail(err)
		return nil
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		n.fail(err)
	}
	return out
}

// storedMessage returns m as decoding its JSON encoding would give it.
// m's slices and maps are not shared with the result.
func storedMessage(m workflow.Message) (workflow.Message, error) {
	var n shaper
	m.ID, m.WorkflowID, m.Role, m.Text, m.Action = jsonStr(m.ID), jsonStr(m.WorkflowID), jsonStr(m.Role), jsonStr(m.Text), jsonStr(m.Action)
	m.ActionObjective, m.Status, m.DocumentsLabel = jsonStr(m.ActionObjective), jsonStr(m.Status), jsonStr(m.DocumentsLabel)
	m.Summary, m.Findings = jsonStr(m.Summary), jsonStr(m.Findings)
	m.Parameters = n.params(m.Parameters, true)
	if m.Documents != nil {
		docs := make([]workflow.Document, len(m.Documents))
		for i, d := range m.Documents {
			d.ID, d.WorkflowID, d.MessageID, d.Name, d.MimeType = jsonStr(d.ID), jsonStr(d.WorkflowID), jsonStr(d.MessageID), jsonStr(d.Name), jsonStr(d.MimeType)
			docs[i] = d
		}
		m.Documents = docs
	}
	if len(m.Learnings) == 0 {
		m.Learnings = nil // omitempty
	} else {
		ls := make([]string, len(m.Learnings))
		for i, l := range m.Learnings {
			ls[i] = jsonStr(l)
		}
		m.Learnings = ls
	}
	m.CreatedAt = n.tm(m.CreatedAt)
	return m, n.err
}
