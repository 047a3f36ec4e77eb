// Package jsonform gives workflow values the form a JSON round trip
// (encoding/json Marshal, then Unmarshal) would give them, without the
// round trip: invalid UTF-8 replaced, parameter values as JSON's own types
// (float64, []any, map[string]any), empty omitempty fields nil, times
// without their monotonic reading and in the location a decoded time
// gets; it fails where Marshal would (NaN, a time outside years 0–9999).
// What it does not shape itself (numbers other than float64, typed
// values, keys that are not valid UTF-8, times with an offset) takes the
// real round trip. The memory store keeps values in this form and the
// Redis store hands back committed messages in it, so both answer as a
// read of their JSON would. AppendParams, MarshalParams and AppendString
// write a parameter map's or a string's encoding, exactly json.Marshal's
// bytes, without its reflection (the action trace's parameters, the Redis
// store's traces); CompactAsIs tells when Marshal writes raw JSON as it
// is, so a store can keep or copy it without json.Compact.
package jsonform

import (
	"encoding/json"
	"maps"
	"math"
	"time"
	"unicode/utf8"

	"github.com/twostep/twostep/workflow"
)

// Shaper carries the first error met while normalising a value, so the
// shaping functions can be written without checking each field.
type Shaper struct{ Err error }

func (n *Shaper) Fail(err error) {
	if n.Err == nil {
		n.Err = err
	}
}

// Str returns s as JSON would decode its encoding: each byte of an invalid
// UTF-8 sequence replaced by U+FFFD. s itself when valid (nearly always).
func Str[S ~string](s S) S {
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

// Strs returns a copy of ss with each string normalised; keepEmpty says
// whether an empty non-nil slice survives (a field without omitempty).
func Strs(ss []string, keepEmpty bool) []string {
	if ss == nil || len(ss) == 0 && !keepEmpty {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = Str(s)
	}
	return out
}

// ShapedStrs reports whether Strs(ss, keepEmpty) would return a slice
// equal to ss (reflect.DeepEqual), so a store handed ss
// (workflow.Commit.Handover) may keep it rather than copy it.
func ShapedStrs(ss []string, keepEmpty bool) bool {
	if ss == nil {
		return true
	}
	if len(ss) == 0 {
		return keepEmpty
	}
	for _, s := range ss {
		if !utf8.ValidString(s) {
			return false
		}
	}
	return true
}

// Time returns t as JSON would decode its encoding.
func (n *Shaper) Time(t time.Time) time.Time {
	if _, off := t.Zone(); off == 0 {
		if y := t.Year(); y >= 0 && y <= 9999 {
			return t.UTC()
		}
	}
	// Another offset (decoded as time.Local when it has that offset, else
	// as a fixed zone) or an out-of-range year (an error): rare enough to
	// take the real round trip.
	b, err := t.MarshalJSON()
	if err != nil {
		n.Fail(err)
		return t
	}
	var out time.Time
	if err := out.UnmarshalJSON(b); err != nil {
		n.Fail(err)
		return t
	}
	return out
}

// Params returns a normalised copy of a parameter map; omitEmpty says the
// field has omitempty (an empty map then decodes as nil).
func (n *Shaper) Params(m map[string]any, omitEmpty bool) map[string]any {
	if m == nil || len(m) == 0 && omitEmpty {
		return nil
	}
	for k := range m {
		if !utf8.ValidString(k) {
			// Two keys could become one: let JSON decide. (nil, with
			// n.Err set, when a value cannot be encoded.)
			out, _ := n.RoundTrip(m).(map[string]any)
			return out
		}
	}
	// maps.Clone copies the table whole, much cheaper than inserting
	// each key into a new map; only the values that are not already
	// immutable and normalised are then replaced (same keys: no growth).
	out := maps.Clone(m)
	for k, v := range out {
		if !Normalised(v) {
			out[k] = n.Value(v)
		}
	}
	return out
}

// ShapedParams reports whether Params(m, omitEmpty) would return a map
// equal to m (reflect.DeepEqual): m is already in the form a round trip
// gives, so a store handed m (workflow.Commit.Handover) may keep it
// rather than copy it.
func ShapedParams(m map[string]any, omitEmpty bool) bool {
	if m == nil {
		return true
	}
	if len(m) == 0 {
		return !omitEmpty
	}
	for k, v := range m {
		if !utf8.ValidString(k) || !ShapedValue(v) {
			return false
		}
	}
	return true
}

// ShapedValue reports whether Value(v) would return a value equal to v
// (reflect.DeepEqual): JSON's own types, normalised, all the way down.
func ShapedValue(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		return v != nil && ShapedParams(v, false)
	case []any:
		if v == nil {
			return false
		}
		for _, e := range v {
			if !ShapedValue(e) {
				return false
			}
		}
		return true
	}
	return Normalised(v)
}

// Normalised reports whether v is an immutable value a JSON round trip
// gives back unchanged, so the stored copy can keep it as it is.
func Normalised(v any) bool {
	switch v := v.(type) {
	case nil, bool:
		return true
	case string:
		return utf8.ValidString(v)
	case float64:
		return !math.IsNaN(v) && !math.IsInf(v, 0)
	}
	return false
}

// Value returns a normalised copy of a parameter value: JSON's own types
// are copied, anything else takes the real round trip.
func (n *Shaper) Value(v any) any {
	switch v := v.(type) {
	case nil, bool:
		return v
	case string:
		return Str(v)
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return n.RoundTrip(v) // Marshal's error
		}
		return v
	case map[string]any:
		if v == nil {
			return nil // null decodes as a nil interface
		}
		return n.Params(v, false)
	case []any:
		if v == nil {
			return nil
		}
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = n.Value(e)
		}
		return out
	}
	return n.RoundTrip(v)
}

// RoundTrip is the JSON round trip of v, for the values value does not
// copy itself (ints, json.Number, structs, typed slices and maps...).
func (n *Shaper) RoundTrip(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		n.Fail(err)
		return nil
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		n.Fail(err)
	}
	return out
}

// Stages returns t as JSON would decode its encoding: t itself unless a
// stage is not valid UTF-8 (only a stage this version does not know can
// be), when two stages could become one and the real round trip decides.
func (n *Shaper) Stages(t workflow.StageTable) workflow.StageTable {
	if !t.HasUnknown() {
		return t // the known stages are valid UTF-8
	}
	for s := range t.All() {
		if !utf8.ValidString(string(s)) {
			var out workflow.StageTable
			b, err := json.Marshal(t)
			if err == nil {
				err = json.Unmarshal(b, &out)
			}
			if err != nil {
				n.Fail(err)
				return t
			}
			return out
		}
	}
	return t
}

// Message returns m as decoding its JSON encoding would give it.
func Message(m workflow.Message) (workflow.Message, error) {
	var n Shaper
	m.ID, m.WorkflowID, m.Role, m.Text, m.Action = Str(m.ID), Str(m.WorkflowID), Str(m.Role), Str(m.Text), Str(m.Action)
	m.ActionObjective, m.Status, m.DocumentsLabel = Str(m.ActionObjective), Str(m.Status), Str(m.DocumentsLabel)
	m.Summary, m.Findings = Str(m.Summary), Str(m.Findings)
	m.Parameters = n.Params(m.Parameters, true)
	if m.Documents != nil {
		docs := make([]workflow.Document, len(m.Documents))
		for i, d := range m.Documents {
			d.ID, d.WorkflowID, d.MessageID, d.Name, d.MimeType = Str(d.ID), Str(d.WorkflowID), Str(d.MessageID), Str(d.Name), Str(d.MimeType)
			docs[i] = d
		}
		m.Documents = docs
	}
	m.Learnings = Strs(m.Learnings, false)
	if a := m.ApprovedBy; a != nil {
		m.ApprovedBy = &workflow.ApprovedBy{StandingApprovalID: Str(a.StandingApprovalID), GrantedBy: Str(a.GrantedBy)}
	}
	m.CreatedAt = n.Time(m.CreatedAt)
	return m, n.Err
}
