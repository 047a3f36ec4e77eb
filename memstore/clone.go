package memstore

import (
	"bytes"
	"encoding/json"
	"maps"

	"github.com/twostep/twostep/workflow"
	"github.com/twostep/twostep/workflow/jsonform"
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
// every read decoded JSON. (Commit hands back the workflow it was given,
// with its new version, as the Store contract allows, and copies of the
// stored form of the messages.) TestStoredFormIsJSONRoundTrip holds the two
// equal for every field.

// storeWorkflow returns the stored form of w.
func storeWorkflow(w *workflow.Workflow) (*workflow.Workflow, error) {
	var n jsonform.Shaper
	c := *w
	c.ID, c.UserID, c.Mode, c.Status, c.StopReason = jsonform.Str(w.ID), jsonform.Str(w.UserID), jsonform.Str(w.Mode), jsonform.Str(w.Status), jsonform.Str(w.StopReason)
	c.Title, c.Error = jsonform.Str(w.Title), jsonform.Str(w.Error)
	c.Stats.ByStage = n.Stages(w.Stats.ByStage)
	c.CreatedAt, c.UpdatedAt = n.Time(w.CreatedAt), n.Time(w.UpdatedAt)
	c.Checkpoint = checkpoint(&n, w.Checkpoint)
	if p := w.PendingApproval; p != nil {
		a := *p
		a.ID, a.Action, a.ActionObjective, a.Connection, a.Effect = jsonform.Str(p.ID), jsonform.Str(p.Action), jsonform.Str(p.ActionObjective), jsonform.Str(p.Connection), jsonform.Str(p.Effect)
		a.Parameters = n.Params(p.Parameters, false)
		a.Documents = jsonform.Strs(p.Documents, true)
		a.RequestedAt, a.ExpiresAt = n.Time(p.RequestedAt), n.Time(p.ExpiresAt)
		c.PendingApproval = &a
	}
	c.TraceContext.Origin, c.TraceContext.Round = jsonform.Str(w.TraceContext.Origin), jsonform.Str(w.TraceContext.Round)
	if n.Err != nil {
		return nil, n.Err
	}
	return &c, nil
}

func checkpoint(n *jsonform.Shaper, cp *workflow.Checkpoint) *workflow.Checkpoint {
	if cp == nil {
		return nil
	}
	c := *cp
	c.Phase = jsonform.Str(cp.Phase)
	if s := cp.Selection; s != nil {
		sel := *s
		sel.Action, sel.ActionObjective, sel.RequiredConnection, sel.ParametersContext = jsonform.Str(s.Action), jsonform.Str(s.ActionObjective), jsonform.Str(s.RequiredConnection), jsonform.Str(s.ParametersContext)
		sel.Learnings = jsonform.Strs(s.Learnings, true)
		sel.RequiredInputDocuments = jsonform.Strs(s.RequiredInputDocuments, true)
		if f := s.ParametersSchema.Fields; f != nil {
			sel.ParametersSchema.Fields = make([]workflow.FieldSpec, len(f))
			for i, fs := range f {
				fs.Name, fs.Type, fs.Description = jsonform.Str(fs.Name), jsonform.Str(fs.Type), jsonform.Str(fs.Description)
				sel.ParametersSchema.Fields[i] = fs
			}
		}
		c.Selection = &sel
	}
	c.Parameters = n.Params(cp.Parameters, true)
	c.Feedback = jsonform.Strs(cp.Feedback, false)
	c.Previous = jsonform.Str(cp.Previous)
	c.Plan = nil
	if len(cp.Plan) > 0 {
		c.Plan = make([]workflow.PlanStep, len(cp.Plan))
		for i, p := range cp.Plan {
			p.Action, p.ResultLabel, p.Connection = jsonform.Str(p.Action), jsonform.Str(p.ResultLabel), jsonform.Str(p.Connection)
			p.Parameters = n.Params(p.Parameters, false)
			p.Documents = jsonform.Strs(p.Documents, false)
			c.Plan[i] = p
		}
	}
	if g := cp.Approval; g != nil {
		c.Approval = &workflow.ApprovalGrant{ID: jsonform.Str(g.ID), Parameters: n.Params(g.Parameters, false)}
	}
	c.AfterReject = checkpoint(n, cp.AfterReject)
	return &c
}

// storeTrace returns the stored form of t.
func storeTrace(t workflow.Trace) (workflow.Trace, error) {
	var n jsonform.Shaper
	t.ID, t.WorkflowID, t.Stage, t.Template, t.Response = jsonform.Str(t.ID), jsonform.Str(t.WorkflowID), jsonform.Str(t.Stage), jsonform.Str(t.Template), jsonform.Str(t.Response)
	t.Error, t.Model, t.FinishReason, t.OutputMode = jsonform.Str(t.Error), jsonform.Str(t.Model), jsonform.Str(t.FinishReason), jsonform.Str(t.OutputMode)
	if t.Prompt != nil {
		p := make([]workflow.PromptMessage, len(t.Prompt))
		for i, m := range t.Prompt {
			p[i] = workflow.PromptMessage{Role: jsonform.Str(m.Role), Content: jsonform.Str(m.Content)}
		}
		t.Prompt = p
	}
	if len(t.Parsed) == 0 {
		t.Parsed = nil
	} else if jsonform.CompactAsIs(t.Parsed) {
		// What the modes store: json.Marshal's own output, which a round
		// trip keeps byte for byte. A copy, as the caller keeps its slice.
		t.Parsed = bytes.Clone(t.Parsed)
	} else {
		// Marshal validates a RawMessage and writes it compacted, with
		// HTML's characters escaped; Unmarshal keeps those bytes.
		var buf bytes.Buffer
		buf.Grow(len(t.Parsed))
		if err := json.Compact(&buf, t.Parsed); err != nil {
			n.Fail(err)
		} else if bytes.ContainsAny(buf.Bytes(), "<>&\u2028\u2029") {
			var esc bytes.Buffer
			json.HTMLEscape(&esc, buf.Bytes())
			buf = esc
		}
		t.Parsed = buf.Bytes()
	}
	t.CreatedAt = n.Time(t.CreatedAt)
	return t, n.Err
}

// The copy* functions deep-copy stored values (already normalised) for a
// caller.

func copyWorkflow(w *workflow.Workflow) *workflow.Workflow {
	c := *w
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
