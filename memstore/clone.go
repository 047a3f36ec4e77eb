package memstore

import (
	"bytes"
	"encoding/json"
	"maps"
	"time"

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
// equal for every field. A commit whose caller hands its workflow over
// (workflow.Commit.Handover: the engine's run commits) keeps the parts
// already in stored form — usually all of it — instead of copying them;
// TestHandoverKeepsWhatIsInStoredForm holds that to the copy, field by
// field.

// storeWorkflow returns the stored form of w. With keep (a commit that
// hands its workflow over, workflow.Commit.Handover) it returns w itself
// when w is in stored form already, and otherwise a copy that shares the
// parts of w already in stored form; w is never changed.
func storeWorkflow(w *workflow.Workflow, keep bool) (*workflow.Workflow, error) {
	n := shaper{keep: keep}
	c := *w
	c.ID, c.UserID, c.Mode, c.Status, c.StopReason = str(&n, w.ID), str(&n, w.UserID), str(&n, w.Mode), str(&n, w.Status), str(&n, w.StopReason)
	c.Title, c.Error = str(&n, w.Title), str(&n, w.Error)
	if keep && w.Stats.ByStage.HasUnknown() {
		n.changed = true // rare: the copy is the safe side
	}
	c.Stats.ByStage = n.Stages(w.Stats.ByStage)
	c.CreatedAt, c.UpdatedAt = n.time(w.CreatedAt), n.time(w.UpdatedAt)
	c.Checkpoint = n.checkpoint(w.Checkpoint)
	c.PendingApproval = n.pending(w.PendingApproval)
	c.TraceContext.Origin, c.TraceContext.Round = str(&n, w.TraceContext.Origin), str(&n, w.TraceContext.Round)
	c.ForkedFrom.WorkflowID = str(&n, w.ForkedFrom.WorkflowID)
	c.QueuedRounds = n.queued(w.QueuedRounds)
	if n.Err != nil {
		return nil, n.Err
	}
	if keep && !n.changed {
		return w, nil
	}
	out := new(workflow.Workflow)
	*out = c
	return out, nil
}

// shaper gives values their stored form (jsonform.Shaper). Without keep
// it copies every part, as a store must that may not keep its caller's
// memory; with keep it hands back each part already in stored form as it
// is, and changed records that some part was not.
type shaper struct {
	jsonform.Shaper
	keep    bool
	changed bool
}

// str is jsonform.Str, noting a change.
func str[S ~string](n *shaper, s S) S {
	out := jsonform.Str(s)
	if n.keep && out != s {
		n.changed = true
	}
	return out
}

// time is Shaper.Time, noting a change (any difference of representation:
// a monotonic reading, another location).
func (n *shaper) time(t time.Time) time.Time {
	out := n.Time(t)
	if n.keep && out != t {
		n.changed = true
	}
	return out
}

// strs is jsonform.Strs, or ss itself when kept.
func (n *shaper) strs(ss []string, keepEmpty bool) []string {
	if n.keep {
		if jsonform.ShapedStrs(ss, keepEmpty) {
			return ss
		}
		n.changed = true
	}
	return jsonform.Strs(ss, keepEmpty)
}

// params is Shaper.Params, or m itself when kept.
func (n *shaper) params(m map[string]any, omitEmpty bool) map[string]any {
	if n.keep {
		if jsonform.ShapedParams(m, omitEmpty) {
			return m
		}
		n.changed = true
	}
	return n.Params(m, omitEmpty)
}

// part runs shape on a part of a value, noting in the outer value's
// changed whether the part changed, and returns that.
func (n *shaper) part(shape func()) (changed bool) {
	outer := n.changed
	n.changed = false
	shape()
	changed = n.changed
	n.changed = outer || changed
	return changed
}

// kept returns orig when the part was kept, else a new copy of shaped.
func kept[T any](n *shaper, changed bool, orig *T, shaped T) *T {
	if n.keep && !changed {
		return orig
	}
	out := new(T)
	*out = shaped
	return out
}

func (n *shaper) checkpoint(cp *workflow.Checkpoint) *workflow.Checkpoint {
	if cp == nil {
		return nil
	}
	c := *cp
	changed := n.part(func() {
		c.Phase = str(n, cp.Phase)
		c.Selection = n.selection(cp.Selection)
		c.Parameters = n.params(cp.Parameters, true)
		c.Feedback = n.strs(cp.Feedback, false)
		c.Previous = str(n, cp.Previous)
		c.Plan = n.plan(cp.Plan)
		if g := cp.Approval; g != nil {
			var shaped workflow.ApprovalGrant
			gc := n.part(func() {
				shaped = workflow.ApprovalGrant{ID: str(n, g.ID), Parameters: n.params(g.Parameters, false),
					Kind: str(n, g.Kind), Constraints: n.params(g.Constraints, true)}
			})
			c.Approval = kept(n, gc, g, shaped)
		}
		c.AfterReject = n.checkpoint(cp.AfterReject)
	})
	return kept(n, changed, cp, c)
}

func (n *shaper) selection(s *workflow.Selection) *workflow.Selection {
	if s == nil {
		return nil
	}
	sel := *s
	changed := n.part(func() {
		sel.Action, sel.ActionObjective, sel.RequiredConnection, sel.ParametersContext = str(n, s.Action), str(n, s.ActionObjective), str(n, s.RequiredConnection), str(n, s.ParametersContext)
		sel.Learnings = n.strs(s.Learnings, true)
		sel.RequiredInputDocuments = n.strs(s.RequiredInputDocuments, true)
		if f := s.ParametersSchema.Fields; f != nil {
			sel.ParametersSchema.Fields = n.fields(f)
		}
	})
	return kept(n, changed, s, sel)
}

func (n *shaper) fields(f []workflow.FieldSpec) []workflow.FieldSpec {
	return each(n, f, func(fs workflow.FieldSpec) workflow.FieldSpec {
		fs.Name, fs.Type, fs.Description = str(n, fs.Name), str(n, fs.Type), str(n, fs.Description)
		return fs
	})
}

// plan is the stored form of a plan: nil when empty (omitempty).
func (n *shaper) plan(plan []workflow.PlanStep) []workflow.PlanStep {
	if len(plan) == 0 {
		if n.keep && plan != nil {
			n.changed = true
		}
		return nil
	}
	return each(n, plan, func(p workflow.PlanStep) workflow.PlanStep {
		p.Action, p.ResultLabel, p.Connection = str(n, p.Action), str(n, p.ResultLabel), str(n, p.Connection)
		p.Parameters = n.params(p.Parameters, false)
		p.Documents = n.strs(p.Documents, false)
		return p
	})
}

// each is the stored form of a slice, shape giving each element's: a new
// slice, or with keep s itself when no element changed (a slice whose
// first elements are kept is copied from the first one that changed).
func each[T any](n *shaper, s []T, shape func(T) T) []T {
	var out []T
	if !n.keep {
		out = make([]T, len(s))
	}
	for i, e := range s {
		if n.part(func() { e = shape(e) }) && out == nil {
			out = make([]T, len(s))
			copy(out, s[:i])
		}
		if out != nil {
			out[i] = e
		}
	}
	if out == nil {
		return s
	}
	return out
}

func (n *shaper) pending(p *workflow.PendingApproval) *workflow.PendingApproval {
	if p == nil {
		return nil
	}
	a := *p
	changed := n.part(func() {
		a.ID, a.Action, a.ActionObjective, a.Connection, a.Effect = str(n, p.ID), str(n, p.Action), str(n, p.ActionObjective), str(n, p.Connection), str(n, p.Effect)
		a.Parameters = n.params(p.Parameters, false)
		a.Documents = n.strs(p.Documents, true)
		a.RequestedAt, a.ExpiresAt = n.time(p.RequestedAt), n.time(p.ExpiresAt)
		a.Kind, a.ParametersContext = str(n, p.Kind), str(n, p.ParametersContext)
		if len(p.Fields) == 0 { // omitempty
			if n.keep && p.Fields != nil {
				n.changed = true
			}
			a.Fields = nil
		} else {
			a.Fields = n.fields(p.Fields)
		}
	})
	return kept(n, changed, p, a)
}

// queued is the stored form of a queue: nil when empty (omitempty).
func (n *shaper) queued(q []workflow.QueuedRound) []workflow.QueuedRound {
	if len(q) == 0 {
		if n.keep && q != nil {
			n.changed = true
		}
		return nil
	}
	return each(n, q, func(r workflow.QueuedRound) workflow.QueuedRound {
		r.MessageID, r.Prompt, r.QueuedAt = str(n, r.MessageID), str(n, r.Prompt), n.time(r.QueuedAt)
		if len(r.Documents) == 0 {
			if n.keep && r.Documents != nil {
				n.changed = true
			}
			r.Documents = nil
			return r
		}
		r.Documents = each(n, r.Documents, func(d workflow.Document) workflow.Document {
			d.ID, d.WorkflowID, d.MessageID, d.Name, d.MimeType = str(n, d.ID), str(n, d.WorkflowID), str(n, d.MessageID), str(n, d.Name), str(n, d.MimeType)
			return d
		})
		return r
	})
}

// storeTrace returns the stored form of t.
func storeTrace(t workflow.Trace) (workflow.Trace, error) {
	var n jsonform.Shaper
	t.ID, t.WorkflowID, t.Stage, t.Template, t.Response = jsonform.Str(t.ID), jsonform.Str(t.WorkflowID), jsonform.Str(t.Stage), jsonform.Str(t.Template), jsonform.Str(t.Response)
	t.Error, t.Model, t.FinishReason, t.OutputMode = jsonform.Str(t.Error), jsonform.Str(t.Model), jsonform.Str(t.FinishReason), jsonform.Str(t.OutputMode)
	t.Ungrounded = jsonform.Strs(t.Ungrounded, false)
	if t.Prompt != nil {
		p := make([]workflow.PromptMessage, len(t.Prompt))
		for i, m := range t.Prompt {
			p[i] = workflow.PromptMessage{Role: jsonform.Str(m.Role), Content: jsonform.Str(m.Content)}
		}
		t.Prompt = p
	}
	if len(t.Inputs) == 0 {
		t.Inputs = nil
	} else {
		in := make(map[string]string, len(t.Inputs))
		for k, v := range t.Inputs {
			in[jsonform.Str(k)] = jsonform.Str(v)
		}
		t.Inputs = in
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
		a.Parameters = workflow.CloneParams(p.Parameters)
		a.Documents = copyStrs(p.Documents)
		if p.Fields != nil {
			a.Fields = append(make([]workflow.FieldSpec, 0, len(p.Fields)), p.Fields...)
		}
		c.PendingApproval = &a
	}
	if w.QueuedRounds != nil {
		c.QueuedRounds = make([]workflow.QueuedRound, len(w.QueuedRounds))
		for i, q := range w.QueuedRounds {
			q.Documents = append([]workflow.Document(nil), q.Documents...)
			c.QueuedRounds[i] = q
		}
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
	c.Parameters = workflow.CloneParams(cp.Parameters)
	c.Feedback = copyStrs(cp.Feedback)
	if cp.Plan != nil {
		c.Plan = make([]workflow.PlanStep, len(cp.Plan))
		for i, p := range cp.Plan {
			p.Parameters = workflow.CloneParams(p.Parameters)
			p.Documents = copyStrs(p.Documents)
			c.Plan[i] = p
		}
	}
	if g := cp.Approval; g != nil {
		c.Approval = &workflow.ApprovalGrant{ID: g.ID, Parameters: workflow.CloneParams(g.Parameters),
			Kind: g.Kind, Constraints: workflow.CloneParams(g.Constraints)}
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

func copyMessage(m workflow.Message) workflow.Message {
	m.Parameters = workflow.CloneParams(m.Parameters)
	if m.Documents != nil {
		m.Documents = append(make([]workflow.Document, 0, len(m.Documents)), m.Documents...)
	}
	m.Learnings = copyStrs(m.Learnings)
	if m.ApprovedBy != nil {
		a := *m.ApprovedBy
		m.ApprovedBy = &a
	}
	return m
}

func copyTrace(t workflow.Trace) workflow.Trace {
	t.Inputs = maps.Clone(t.Inputs)
	t.Ungrounded = copyStrs(t.Ungrounded)
	if t.Prompt != nil {
		t.Prompt = append(make([]workflow.PromptMessage, 0, len(t.Prompt)), t.Prompt...)
	}
	if t.Parsed != nil {
		t.Parsed = append(make(json.RawMessage, 0, len(t.Parsed)), t.Parsed...)
	}
	return t
}
