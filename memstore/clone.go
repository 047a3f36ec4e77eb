package memstore

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"time"
	"unicode/utf8"

	"github.com/twostep/twostep/workflow"
)

// The store keeps workflows, messages and traces as Go values of its own,
// not as JSON: encoding the whole workflow on every commit and decoding it
// on every read was most of the store's cost. A value is copied in by the
// store* functions, which return exactly what a JSON round trip
// (json.Marshal, then json.Unmarshal) of it would give — invalid UTF-8
// replaced, parameter values as JSON types (float64, []any, map[string]any),
// empty omitempty fields nil, times without their monotonic reading and in
// the location a decoded time gets, a trace's parsed JSON compacted — and
// fails where Marshal would (NaN, a time outside years 0–9999, invalid
// parsed JSON). Reads hand out deep copies made by the copy* functions, so a
// caller never shares memory with the store or with another caller, as when
// every read decoded JSON. (Commit hands back a Clone of the workflow it
// was given, as before and as redisstore does, and the stored form of
// the messages.) TestStoredFormIsJSONRoundTrip holds the two
// equal for every field.

// norm carries the first error met while normalising a value, so the
// store* functions can be written without checking each field.
type norm struct{ err error }

func (n *norm) fail(err error) {
	if n.err == nil {
		n.err = err
	}
}

// str returns s as JSON would decode its encoding: each byte of an invalid
// UTF-8 sequence replaced by U+FFFD. s itself when valid (nearly always).
func str[S ~string](s S) S {
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

// strs returns a copy of ss with each string normalised; keepEmpty says
// whether an empty non-nil slice survives (a field without omitempty).
func strs(ss []string, keepEmpty bool) []string {
	if ss == nil || len(ss) == 0 && !keepEmpty {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = str(s)
	}
	return out
}

// tm returns t as JSON would decode its encoding.
func (n *norm) tm(t time.Time) time.Time {
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

// params returns a normalised copy of a parameter map; omitEmpty says the
// field has omitempty (an empty map then decodes as nil).
func (n *norm) params(m map[string]any, omitEmpty bool) map[string]any {
	if m == nil || len(m) == 0 && omitEmpty {
		return nil
	}
	for k := range m {
		if !utf8.ValidString(k) {
			// Two keys could become one: let JSON decide.
			return n.roundTrip(m).(map[string]any)
		}
	}
	// maps.Clone copies the table whole, much cheaper than inserting
	// each key into a new map; only the values that are not already
	// immutable and normalised are then replaced (same keys: no growth).
	out := maps.Clone(m)
	for k, v := range out {
		if !normalised(v) {
			out[k] = n.value(v)
		}
	}
	return out
}

// normalised reports whether v is an immutable value a JSON round trip
// gives back unchanged, so the stored copy can keep it as it is.
func normalised(v any) bool {
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

// value returns a normalised copy of a parameter value: JSON's own types
// are copied, anything else takes the real round trip.
func (n *norm) value(v any) any {
	switch v := v.(type) {
	case nil, bool:
		return v
	case string:
		return str(v)
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

// roundTrip is the JSON round trip of v, for the values value does not
// copy itself (ints, json.Number, structs, typed slices and maps...).
func (n *norm) roundTrip(v any) any {
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

// storeWorkflow returns the stored form of w.
func storeWorkflow(w *workflow.Workflow) (*workflow.Workflow, error) {
	var n norm
	c := *w
	c.ID, c.UserID, c.Mode, c.Status, c.StopReason = str(w.ID), str(w.UserID), str(w.Mode), str(w.Status), str(w.StopReason)
	c.Title, c.Error = str(w.Title), str(w.Error)
	c.Stats.ByStage = nil
	if w.Stats.ByStage != nil {
		c.Stats.ByStage = storeByStage(w.Stats.ByStage)
	}
	c.CreatedAt, c.UpdatedAt = n.tm(w.CreatedAt), n.tm(w.UpdatedAt)
	c.Checkpoint = n.checkpoint(w.Checkpoint)
	if p := w.PendingApproval; p != nil {
		a := *p
		a.ID, a.Action, a.ActionObjective, a.Connection, a.Effect = str(p.ID), str(p.Action), str(p.ActionObjective), str(p.Connection), str(p.Effect)
		a.Parameters = n.params(p.Parameters, false)
		a.Documents = strs(p.Documents, true)
		a.RequestedAt, a.ExpiresAt = n.tm(p.RequestedAt), n.tm(p.ExpiresAt)
		c.PendingApproval = &a
	}
	c.TraceContext.Origin, c.TraceContext.Round = str(w.TraceContext.Origin), str(w.TraceContext.Round)
	if n.err != nil {
		return nil, n.err
	}
	return &c, nil
}

// storeByStage returns the stored form of a Stats.ByStage map.
func storeByStage(m map[workflow.Stage]workflow.StageStats) map[workflow.Stage]workflow.StageStats {
	for k := range m {
		if !utf8.ValidString(string(k)) {
			out := make(map[workflow.Stage]workflow.StageStats, len(m))
			for k, v := range m {
				out[str(k)] = v
			}
			return out
		}
	}
	return maps.Clone(m) // the table copied whole
}

func (n *norm) checkpoint(cp *workflow.Checkpoint) *workflow.Checkpoint {
	if cp == nil {
		return nil
	}
	c := *cp
	c.Phase = str(cp.Phase)
	if s := cp.Selection; s != nil {
		sel := *s
		sel.Action, sel.ActionObjective, sel.RequiredConnection, sel.ParametersContext = str(s.Action), str(s.ActionObjective), str(s.RequiredConnection), str(s.ParametersContext)
		sel.Learnings = strs(s.Learnings, true)
		sel.RequiredInputDocuments = strs(s.RequiredInputDocuments, true)
		if f := s.ParametersSchema.Fields; f != nil {
			sel.ParametersSchema.Fields = make([]workflow.FieldSpec, len(f))
			for i, fs := range f {
				fs.Name, fs.Type, fs.Description = str(fs.Name), str(fs.Type), str(fs.Description)
				sel.ParametersSchema.Fields[i] = fs
			}
		}
		c.Selection = &sel
	}
	c.Parameters = n.params(cp.Parameters, true)
	c.Feedback = strs(cp.Feedback, false)
	c.Previous = str(cp.Previous)
	c.Plan = nil
	if len(cp.Plan) > 0 {
		c.Plan = make([]workflow.PlanStep, len(cp.Plan))
		for i, p := range cp.Plan {
			p.Action, p.ResultLabel, p.Connection = str(p.Action), str(p.ResultLabel), str(p.Connection)
			p.Parameters = n.params(p.Parameters, false)
			p.Documents = strs(p.Documents, false)
			c.Plan[i] = p
		}
	}
	if g := cp.Approval; g != nil {
		c.Approval = &workflow.ApprovalGrant{ID: str(g.ID), Parameters: n.params(g.Parameters, false)}
	}
	c.AfterReject = n.checkpoint(cp.AfterReject)
	return &c
}

// storeMessage returns the stored form of m.
func storeMessage(m workflow.Message) (workflow.Message, error) {
	var n norm
	m.ID, m.WorkflowID, m.Role, m.Text, m.Action = str(m.ID), str(m.WorkflowID), str(m.Role), str(m.Text), str(m.Action)
	m.ActionObjective, m.Status, m.DocumentsLabel = str(m.ActionObjective), str(m.Status), str(m.DocumentsLabel)
	m.Summary, m.Findings = str(m.Summary), str(m.Findings)
	m.Parameters = n.params(m.Parameters, true)
	if m.Documents != nil {
		docs := make([]workflow.Document, len(m.Documents))
		for i, d := range m.Documents {
			d.ID, d.WorkflowID, d.MessageID, d.Name, d.MimeType = str(d.ID), str(d.WorkflowID), str(d.MessageID), str(d.Name), str(d.MimeType)
			docs[i] = d
		}
		m.Documents = docs
	}
	m.Learnings = strs(m.Learnings, false)
	m.CreatedAt = n.tm(m.CreatedAt)
	return m, n.err
}

// storeTrace returns the stored form of t.
func storeTrace(t workflow.Trace) (workflow.Trace, error) {
	var n norm
	t.ID, t.WorkflowID, t.Stage, t.Template, t.Response = str(t.ID), str(t.WorkflowID), str(t.Stage), str(t.Template), str(t.Response)
	t.Error, t.Model, t.FinishReason, t.OutputMode = str(t.Error), str(t.Model), str(t.FinishReason), str(t.OutputMode)
	if t.Prompt != nil {
		p := make([]workflow.PromptMessage, len(t.Prompt))
		for i, m := range t.Prompt {
			p[i] = workflow.PromptMessage{Role: str(m.Role), Content: str(m.Content)}
		}
		t.Prompt = p
	}
	if len(t.Parsed) == 0 {
		t.Parsed = nil
	} else {
		// Marshal validates a RawMessage and writes it compacted, with
		// HTML's characters escaped; Unmarshal keeps those bytes.
		var buf bytes.Buffer
		buf.Grow(len(t.Parsed))
		if err := json.Compact(&buf, t.Parsed); err != nil {
			n.fail(err)
		} else if bytes.ContainsAny(buf.Bytes(), "<>&\u2028\u2029") {
			var esc bytes.Buffer
			json.HTMLEscape(&esc, buf.Bytes())
			buf = esc
		}
		t.Parsed = buf.Bytes()
	}
	t.CreatedAt = n.tm(t.CreatedAt)
	return t, n.err
}

// The copy* functions deep-copy stored values (already normalised) for a
// caller.

func copyWorkflow(w *workflow.Workflow) *workflow.Workflow {
	c := *w
	c.Stats.ByStage = maps.Clone(w.Stats.ByStage) // nil stays nil
	c.Checkpoint = copyCheckpoint(w.Checkpoint)
	if p := w.PendingApproval; p != nil {
		a := *p
		a.Parameters = copyParams(p.Parameters)
		a.Documents = copyStrs(p.Documents)
		c.PendingApproval = &a
	}
	return &c
}

func copyCheckpoint(cp *workflow.Checkpoint) *workflow.Checkpoint {
	if cp == nil {
		return nil
	}
	c := *cp
	if s := cp.Selection; s != nil {
		sel := *s
		sel.Learnings = copyStrs(s.Learnings)
		sel.RequiredInputDocuments = copyStrs(s.RequiredInputDocuments)
		if s.ParametersSchema.Fields != nil {
			sel.ParametersSchema.Fields = append(make([]workflow.FieldSpec, 0, len(s.ParametersSchema.Fields)), s.ParametersSchema.Fields...)
		}
		c.Selection = &sel
	}
	c.Parameters = copyParams(cp.Parameters)
	c.Feedback = copyStrs(cp.Feedback)
	if cp.Plan != nil {
		c.Plan = make([]workflow.PlanStep, len(cp.Plan))
		for i, p := range cp.Plan {
			p.Parameters = copyParams(p.Parameters)
			p.Documents = copyStrs(p.Documents)
			c.Plan[i] = p
		}
	}
	if g := cp.Approval; g != nil {
		c.Approval = &workflow.ApprovalGrant{ID: g.ID, Parameters: copyParams(g.Parameters)}
	}
	c.AfterReject = copyCheckpoint(cp.AfterReject)
	return &c
}

func copyStrs(ss []string) []string {
	if ss == nil {
		return nil
	}
	return append(make([]string, 0, len(ss)), ss...)
}

func copyParams(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := maps.Clone(m) // the table copied whole
	for k, v := range out {
		switch v.(type) {
		case map[string]any, []any:
			out[k] = copyValue(v)
		}
	}
	return out
}

// copyValue copies a stored parameter value: only JSON's types occur.
func copyValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return copyParams(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = copyValue(e)
		}
		return out
	}
	return v // nil, bool, float64, string: immutable
}

func copyMessage(m workflow.Message) workflow.Message {
	m.Parameters = copyParams(m.Parameters)
	if m.Documents != nil {
		m.Documents = append(make([]workflow.Document, 0, len(m.Documents)), m.Documents...)
	}
	m.Learnings = copyStrs(m.Learnings)
	return m
}

func copyTrace(t workflow.Trace) workflow.Trace {
	if t.Prompt != nil {
		t.Prompt = append(make([]workflow.PromptMessage, 0, len(t.Prompt)), t.Prompt...)
	}
	if t.Parsed != nil {
		t.Parsed = append(make(json.RawMessage, 0, len(t.Parsed)), t.Parsed...)
	}
	return t
}
