package redisstore

import (
	"encoding/json"

	"github.com/twostep/twostep/workflow"
	"github.com/twostep/twostep/workflow/jsonform"
)

// Every read of a workflow decodes its whole state, and json.Unmarshal
// spends most of that in reflection. parseWorkflow reads the one form the
// store writes (appendWorkflow's, which is json.Marshal's) without it, and
// leaves anything else to json.Unmarshal: it only ever accepts input that
// Unmarshal decodes without error, and gives what Unmarshal gives.
// FuzzParseWorkflow holds it to that on arbitrary input, and the encoder's
// tests hold that it takes everything appendWorkflow writes.

// parseWorkflow decodes b when it is in the exact form appendWorkflow
// writes: the fields in their order, without whitespace, each key in its
// exact spelling. It reports false for anything else (another order, a
// duplicate or unknown key, an escape it does not read, invalid UTF-8, a
// number out of range), for json.Unmarshal to decode. Strings without
// escapes share the memory of one copy of b.
func parseWorkflow(b []byte) (*workflow.Workflow, bool) {
	r := stateReader{s: string(b), b: b, ok: true}
	w := new(workflow.Workflow)
	w.ID = r.str(`{"id":`)
	w.UserID = r.str(`,"userId":`)
	w.Mode = workflow.ModeName(r.str(`,"mode":`))
	w.Status = workflow.Status(r.str(`,"status":`))
	w.StopReason = workflow.StopReason(r.str(`,"stopReason":`))
	w.Round = r.int(`,"round":`)
	w.Step = r.int(`,"step":`)
	w.MaxSteps = r.int(`,"maxSteps":`)
	if r.has(`,"title":`) {
		w.Title = r.str("")
	}
	w.Error = r.str(`,"error":`)
	w.Stats.LLMCalls = r.int(`,"stats":{"llmCalls":`)
	w.Stats.PromptTokens = r.int(`,"promptTokens":`)
	w.Stats.CompletionTokens = r.int(`,"completionTokens":`)
	w.Stats.Actions = r.int(`,"actions":`)
	w.Stats.ByStage = r.stageTable(`,"byStage":`)
	r.expect("}")
	w.CreatedAt = r.time(`,"createdAt":`)
	w.UpdatedAt = r.time(`,"updatedAt":`)
	w.Version = r.int64(`,"version":`)
	if r.has(`,"checkpoint":`) {
		w.Checkpoint = r.checkpoint(0)
	}
	if r.has(`,"pendingApproval":`) {
		w.PendingApproval = r.pendingApproval()
	}
	if r.has(`,"traceContext":{`) {
		if r.has(`"origin":`) {
			w.TraceContext.Origin = r.str("")
			if r.has(`,"round":`) {
				w.TraceContext.Round = r.str("")
			}
		} else if r.has(`"round":`) {
			w.TraceContext.Round = r.str("")
		}
		r.expect("}")
	}
	if r.has(`,"forkedFrom":{"workflowId":`) {
		w.ForkedFrom.WorkflowID = r.str("")
		w.ForkedFrom.Round = r.int(`,"round":`)
		w.ForkedFrom.Step = r.int(`,"step":`)
		r.expect("}")
	}
	if r.has(`,"queuedRounds":`) {
		w.QueuedRounds = r.queued()
	}
	if r.has(`,"queueEdits":`) {
		w.QueueEdits = r.int64("")
	}
	r.expect("}")
	if !r.ok || r.i != len(r.s) {
		return nil, false
	}
	return w, true
}

// queued reads the queued rounds with json.Unmarshal, having found their
// end with jsonform.CompactAsIsPrefix, as params does.
func (r *stateReader) queued() []workflow.QueuedRound {
	if r.i >= len(r.s) || r.s[r.i] != '[' {
		r.ok = false
		return nil
	}
	n, ok := jsonform.CompactAsIsPrefix(r.b[r.i:])
	if !ok {
		r.ok = false
		return nil
	}
	var q []workflow.QueuedRound
	if err := json.Unmarshal(r.b[r.i:r.i+n], &q); err != nil || len(q) == 0 {
		r.ok = false
	}
	r.i += n
	return q
}

// checkpoint reads a checkpoint, whose AfterReject chain is depth deep
// already.
func (r *stateReader) checkpoint(depth int) *workflow.Checkpoint {
	if depth > maxCheckpointDepth {
		r.ok = false
		return nil
	}
	c := new(workflow.Checkpoint)
	c.Step = r.int(`{"step":`)
	c.Phase = workflow.Phase(r.str(`,"phase":`))
	if r.has(`,"selection":`) {
		c.Selection = r.selection()
	}
	if r.has(`,"parameters":`) {
		c.Parameters = r.params("")
	}
	c.Failures = r.int(`,"failures":`)
	if r.has(`,"attempt":`) {
		c.Attempt = r.int("")
	}
	if r.has(`,"feedback":`) {
		c.Feedback = r.strs("")
	}
	if r.has(`,"maxTokens":`) {
		c.MaxTokens = r.int("")
	}
	if r.has(`,"previous":`) {
		c.Previous = r.str("")
	}
	if r.has(`,"plan":`) {
		c.Plan = r.plan()
	}
	if r.has(`,"planIndex":`) {
		c.PlanIndex = r.int("")
	}
	if r.has(`,"replans":`) {
		c.Replans = r.int("")
	}
	if r.has(`,"compactionSkipped":true`) {
		c.CompactionSkipped = true
	}
	if r.has(`,"approval":`) {
		g := new(workflow.ApprovalGrant)
		g.ID = r.str(`{"id":`)
		g.Parameters = r.params(`,"parameters":`)
		if r.has(`,"kind":`) {
			g.Kind = workflow.ApprovalKind(r.str(""))
		}
		if r.has(`,"constraints":`) {
			g.Constraints = r.params("")
		}
		r.expect("}")
		c.Approval = g
	}
	if r.has(`,"afterReject":`) {
		c.AfterReject = r.checkpoint(depth + 1)
	}
	r.expect("}")
	return c
}

func (r *stateReader) pendingApproval() *workflow.PendingApproval {
	p := new(workflow.PendingApproval)
	p.ID = r.str(`{"id":`)
	p.Round = r.int(`,"round":`)
	p.Step = r.int(`,"step":`)
	p.Action = r.str(`,"action":`)
	p.ActionObjective = r.str(`,"actionObjective":`)
	p.Parameters = r.params(`,"parameters":`)
	p.Documents = r.strs(`,"documents":`)
	p.Connection = r.str(`,"connection":`)
	p.Effect = workflow.Effect(r.str(`,"effect":`))
	p.RequestedAt = r.time(`,"requestedAt":`)
	p.ExpiresAt = r.time(`,"expiresAt":`)
	if r.has(`,"kind":`) {
		p.Kind = workflow.ApprovalKind(r.str(""))
	}
	if r.has(`,"parametersContext":`) {
		p.ParametersContext = r.str("")
	}
	if r.has(`,"fields":`) {
		p.Fields = r.fields()
	}
	r.expect("}")
	return p
}

func (r *stateReader) selection() *workflow.Selection {
	s := new(workflow.Selection)
	s.Action = r.str(`{"action":`)
	s.ActionObjective = r.str(`,"actionObjective":`)
	s.Learnings = r.strs(`,"learnings":`)
	s.RequiredInputDocuments = r.strs(`,"requiredInputDocuments":`)
	if r.has(`,"requiredConnection":`) {
		s.RequiredConnection = r.str("")
	}
	s.ParametersContext = r.str(`,"parametersContext":`)
	r.expect(`,"parametersSchema":{"fields":`)
	s.ParametersSchema.Fields = r.fields()
	r.expect("}}")
	return s
}

// fields reads a parameters schema's fields.
func (r *stateReader) fields() []workflow.FieldSpec {
	if r.has("null") {
		return nil
	}
	r.expect("[")
	fs := []workflow.FieldSpec{}
	for r.ok && !r.has("]") {
		if len(fs) > 0 {
			r.expect(",")
		}
		var f workflow.FieldSpec
		f.Name = r.str(`{"name":`)
		f.Type = r.str(`,"type":`)
		switch {
		case r.has(`,"required":true`):
			f.Required = true
		case r.has(`,"required":false`):
		default:
			r.ok = false
		}
		if r.has(`,"description":`) {
			f.Description = r.str("")
		}
		r.expect("}")
		fs = append(fs, f)
	}
	return fs
}

// plan reads an action plan (never null: omitempty leaves out a nil one).
func (r *stateReader) plan() []workflow.PlanStep {
	r.expect("[")
	var plan []workflow.PlanStep
	for r.ok && !r.has("]") {
		if len(plan) > 0 {
			r.expect(",")
		}
		var p workflow.PlanStep
		p.Action = r.str(`{"action":`)
		p.Parameters = r.params(`,"parameters":`)
		if r.has(`,"resultLabel":`) {
			p.ResultLabel = r.str("")
		}
		if r.has(`,"documents":`) {
			p.Documents = r.strs("")
		}
		if r.has(`,"connection":`) {
			p.Connection = r.str("")
		}
		r.expect("}")
		plan = append(plan, p)
	}
	if plan == nil {
		plan = []workflow.PlanStep{}
	}
	return plan
}
