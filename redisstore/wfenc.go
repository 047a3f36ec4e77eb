package redisstore

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/twostep/twostep/workflow"
	"github.com/twostep/twostep/workflow/jsonform"
)

// Every commit writes the whole workflow state (three commits a step) and
// each new message, and encoding/json spent about 15 % of a step's CPU on
// them, mostly in reflection over their sixty-odd fields. appendWorkflow
// and appendMessage write the same bytes as json.Marshal without it;
// TestAppendWorkflowIsMarshal and TestAppendMessageIsMarshal hold the two
// equal on every field and every optional branch, the fuzz targets on
// fuzzed values, and both fail when one of these types gains a field this
// encoder does not write.

// maxCheckpointDepth bounds the chain of AfterReject checkpoints
// appendWorkflow follows (the engine nests one); a deeper one is left to
// encoding/json, which also refuses a cycle.
const maxCheckpointDepth = 8

// appendWorkflow appends w's JSON, byte for byte what json.Marshal gives,
// to dst. It reports false, with dst unchanged, for a workflow it leaves
// to encoding/json: a time or a parameter Marshal refuses (or that
// jsonform.AppendParams cannot write), or a chain of checkpoints deeper
// than maxCheckpointDepth.
func appendWorkflow(dst []byte, w *workflow.Workflow) ([]byte, bool) {
	e := jsonWriter{b: dst, ok: true}
	e.str(`{"id":`, w.ID)
	e.str(`,"userId":`, w.UserID)
	e.str(`,"mode":`, string(w.Mode))
	e.str(`,"status":`, string(w.Status))
	e.str(`,"stopReason":`, string(w.StopReason))
	e.num(`,"round":`, int64(w.Round))
	e.num(`,"step":`, int64(w.Step))
	e.num(`,"maxSteps":`, int64(w.MaxSteps))
	e.optStr(`,"title":`, w.Title)
	e.str(`,"error":`, w.Error)
	s := &w.Stats
	e.num(`,"stats":{"llmCalls":`, int64(s.LLMCalls))
	e.num(`,"promptTokens":`, int64(s.PromptTokens))
	e.num(`,"completionTokens":`, int64(s.CompletionTokens))
	e.num(`,"actions":`, int64(s.Actions))
	e.b = s.ByStage.AppendJSON(append(e.b, `,"byStage":`...))
	e.b = append(e.b, '}')
	e.time(`,"createdAt":`, w.CreatedAt)
	e.time(`,"updatedAt":`, w.UpdatedAt)
	e.num(`,"version":`, w.Version)
	if w.Checkpoint != nil {
		e.b = append(e.b, `,"checkpoint":`...)
		e.checkpoint(w.Checkpoint, 0)
	}
	if w.PendingApproval != nil {
		e.b = append(e.b, `,"pendingApproval":`...)
		e.pendingApproval(w.PendingApproval)
	}
	if tc := w.TraceContext; tc != (workflow.TraceContext{}) { // omitzero
		e.b = append(e.b, `,"traceContext":{`...)
		if tc.Origin != "" {
			e.str(`"origin":`, tc.Origin)
		}
		if tc.Round != "" {
			if tc.Origin != "" {
				e.b = append(e.b, ',')
			}
			e.str(`"round":`, tc.Round)
		}
		e.b = append(e.b, '}')
	}
	if f := w.ForkedFrom; f != (workflow.ForkOrigin{}) { // omitzero
		e.str(`,"forkedFrom":{"workflowId":`, f.WorkflowID)
		e.num(`,"round":`, int64(f.Round))
		e.num(`,"step":`, int64(f.Step))
		e.b = append(e.b, '}')
	}
	if len(w.QueuedRounds) > 0 {
		// Rare (a round queued behind a running one) and small: left to
		// encoding/json, whose bytes these are.
		q, err := json.Marshal(w.QueuedRounds)
		if err != nil {
			e.ok = false
		}
		e.b = append(append(e.b, `,"queuedRounds":`...), q...)
	}
	e.optNum(`,"queueEdits":`, w.QueueEdits)
	e.b = append(e.b, '}')
	return e.result(len(dst))
}

func (e *jsonWriter) pendingApproval(p *workflow.PendingApproval) {
	e.str(`{"id":`, p.ID)
	e.num(`,"round":`, int64(p.Round))
	e.num(`,"step":`, int64(p.Step))
	e.str(`,"action":`, p.Action)
	e.str(`,"actionObjective":`, p.ActionObjective)
	e.params(`,"parameters":`, p.Parameters)
	e.strs(`,"documents":`, p.Documents)
	e.str(`,"connection":`, p.Connection)
	e.str(`,"effect":`, string(p.Effect))
	e.time(`,"requestedAt":`, p.RequestedAt)
	e.time(`,"expiresAt":`, p.ExpiresAt)
	e.optStr(`,"kind":`, string(p.Kind))
	e.optStr(`,"parametersContext":`, p.ParametersContext)
	if len(p.Fields) > 0 {
		e.b = append(e.b, `,"fields":`...)
		e.fields(p.Fields)
	}
	e.b = append(e.b, '}')
}

// checkpoint writes c, whose AfterReject chain is depth deep already.
func (e *jsonWriter) checkpoint(c *workflow.Checkpoint, depth int) {
	if depth > maxCheckpointDepth {
		e.ok = false
		return
	}
	e.num(`{"step":`, int64(c.Step))
	e.str(`,"phase":`, string(c.Phase))
	if c.Selection != nil {
		e.b = append(e.b, `,"selection":`...)
		e.selection(c.Selection)
	}
	if len(c.Parameters) > 0 {
		e.params(`,"parameters":`, c.Parameters)
	}
	e.num(`,"failures":`, int64(c.Failures))
	e.optNum(`,"attempt":`, int64(c.Attempt))
	if len(c.Feedback) > 0 {
		e.strs(`,"feedback":`, c.Feedback)
	}
	e.optNum(`,"maxTokens":`, int64(c.MaxTokens))
	e.optStr(`,"previous":`, c.Previous)
	if len(c.Plan) > 0 {
		e.b = append(e.b, `,"plan":`...)
		e.plan(c.Plan)
	}
	e.optNum(`,"planIndex":`, int64(c.PlanIndex))
	e.optNum(`,"replans":`, int64(c.Replans))
	if c.CompactionSkipped {
		e.b = append(e.b, `,"compactionSkipped":true`...)
	}
	if g := c.Approval; g != nil {
		e.str(`,"approval":{"id":`, g.ID)
		e.params(`,"parameters":`, g.Parameters)
		e.optStr(`,"kind":`, string(g.Kind))
		if len(g.Constraints) > 0 {
			e.params(`,"constraints":`, g.Constraints)
		}
		e.b = append(e.b, '}')
	}
	if c.AfterReject != nil {
		e.b = append(e.b, `,"afterReject":`...)
		e.checkpoint(c.AfterReject, depth+1)
	}
	e.b = append(e.b, '}')
}

func (e *jsonWriter) selection(s *workflow.Selection) {
	e.str(`{"action":`, s.Action)
	e.str(`,"actionObjective":`, s.ActionObjective)
	e.strs(`,"learnings":`, s.Learnings)
	e.strs(`,"requiredInputDocuments":`, s.RequiredInputDocuments)
	e.optStr(`,"requiredConnection":`, s.RequiredConnection)
	e.str(`,"parametersContext":`, s.ParametersContext)
	e.b = append(e.b, `,"parametersSchema":{"fields":`...)
	e.fields(s.ParametersSchema.Fields)
	e.b = append(e.b, "}}"...)
}

func (e *jsonWriter) plan(plan []workflow.PlanStep) {
	e.b = append(e.b, '[')
	for i := range plan {
		p := &plan[i]
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.str(`{"action":`, p.Action)
		e.params(`,"parameters":`, p.Parameters)
		e.optStr(`,"resultLabel":`, p.ResultLabel)
		if len(p.Documents) > 0 {
			e.strs(`,"documents":`, p.Documents)
		}
		e.optStr(`,"connection":`, p.Connection)
		e.b = append(e.b, '}')
	}
	e.b = append(e.b, ']')
}

// fields writes a parameters schema's fields (null when nil).
func (e *jsonWriter) fields(fs []workflow.FieldSpec) {
	if fs == nil {
		e.b = append(e.b, "null"...)
		return
	}
	e.b = append(e.b, '[')
	for i := range fs {
		f := &fs[i]
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.str(`{"name":`, f.Name)
		e.str(`,"type":`, f.Type)
		e.b = append(e.b, `,"required":`...)
		e.b = strconv.AppendBool(e.b, f.Required)
		e.optStr(`,"description":`, f.Description)
		e.b = append(e.b, '}')
	}
	e.b = append(e.b, ']')
}

// appendMessage appends m's JSON, byte for byte what json.Marshal gives,
// to dst. It reports false, with dst unchanged, for a message it leaves to
// encoding/json: a time or a parameter Marshal refuses (or that
// jsonform.AppendParams cannot write).
func appendMessage(dst []byte, m *workflow.Message) ([]byte, bool) {
	e := jsonWriter{b: dst, ok: true}
	e.str(`{"id":`, m.ID)
	e.str(`,"workflowId":`, m.WorkflowID)
	e.num(`,"seq":`, m.Seq)
	e.num(`,"round":`, int64(m.Round))
	e.num(`,"step":`, int64(m.Step))
	e.str(`,"role":`, string(m.Role))
	e.str(`,"text":`, m.Text)
	e.optStr(`,"action":`, m.Action)
	e.optStr(`,"actionObjective":`, m.ActionObjective)
	if len(m.Parameters) > 0 {
		e.params(`,"parameters":`, m.Parameters)
	}
	e.optStr(`,"status":`, string(m.Status))
	e.optStr(`,"documentsLabel":`, m.DocumentsLabel)
	e.b = append(e.b, `,"documents":`...)
	if m.Documents == nil {
		e.b = append(e.b, "null"...)
	} else {
		e.b = append(e.b, '[')
		for i := range m.Documents {
			d := &m.Documents[i]
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.str(`{"id":`, d.ID)
			e.str(`,"workflowId":`, d.WorkflowID)
			e.str(`,"messageId":`, d.MessageID)
			e.str(`,"name":`, d.Name)
			e.str(`,"mimeType":`, d.MimeType)
			e.num(`,"size":`, d.Size)
			e.b = append(e.b, '}')
		}
		e.b = append(e.b, ']')
	}
	e.optStr(`,"summary":`, m.Summary)
	e.optStr(`,"findings":`, m.Findings)
	if len(m.Learnings) > 0 {
		e.strs(`,"learnings":`, m.Learnings)
	}
	e.optNum(`,"compactedThrough":`, m.CompactedThrough)
	if a := m.ApprovedBy; a != nil {
		e.str(`,"approvedBy":{"standingApprovalId":`, a.StandingApprovalID)
		e.str(`,"grantedBy":`, a.GrantedBy)
		e.b = append(e.b, '}')
	}
	e.time(`,"createdAt":`, m.CreatedAt)
	e.b = append(e.b, '}')
	return e.result(len(dst))
}

// jsonWriter appends JSON to b. Each field method takes the field's key
// with the punctuation before its value (`,"name":`). A value it cannot
// write as json.Marshal does clears ok; what is written after that is
// thrown away by result.
type jsonWriter struct {
	b  []byte
	ok bool
}

// result returns the bytes written and true, or b cut back to start and
// false when a value could not be written.
func (e *jsonWriter) result(start int) ([]byte, bool) {
	if !e.ok {
		return e.b[:start], false
	}
	return e.b, true
}

func (e *jsonWriter) str(key, s string) {
	e.b = jsonform.AppendString(append(e.b, key...), s)
}

// optStr writes an omitempty string field.
func (e *jsonWriter) optStr(key, s string) {
	if s != "" {
		e.str(key, s)
	}
}

func (e *jsonWriter) num(key string, n int64) {
	e.b = strconv.AppendInt(append(e.b, key...), n, 10)
}

// optNum writes an omitempty number field.
func (e *jsonWriter) optNum(key string, n int64) {
	if n != 0 {
		e.num(key, n)
	}
}

// strs writes a []string field: null when ss is nil.
func (e *jsonWriter) strs(key string, ss []string) {
	e.b = append(e.b, key...)
	if ss == nil {
		e.b = append(e.b, "null"...)
		return
	}
	e.b = append(e.b, '[')
	for i, s := range ss {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.b = jsonform.AppendString(e.b, s)
	}
	e.b = append(e.b, ']')
}

// time writes a time as Time.MarshalJSON does: AppendText quoted, which
// needs no escaping; a time it refuses (a year outside 0–9999, an offset
// of a day or more) clears ok.
func (e *jsonWriter) time(key string, t time.Time) {
	e.b = append(append(e.b, key...), '"')
	b, err := t.AppendText(e.b)
	if err != nil {
		e.ok = false
		return
	}
	e.b = append(b, '"')
}

// params writes a parameter map (null when nil); a value AppendParams
// cannot write clears ok.
func (e *jsonWriter) params(key string, m map[string]any) {
	b, err := jsonform.AppendParams(append(e.b, key...), m)
	if err != nil {
		e.ok = false
		return
	}
	e.b = b
}
