package prompts

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/twostep/twostep/workflow"
)

// fakeRegistry is a hand-written workflow.Registry over fixed specs. Its
// validator checks required properties, unknown properties (the schemas
// are closed) and string/number types, with "path: message" lines like the
// real one.
type fakeRegistry struct {
	specs []workflow.ActionSpec
	conns map[string][]workflow.Connection
}

var _ workflow.Registry = (*fakeRegistry)(nil)

func (r *fakeRegistry) Actions() []workflow.ActionSpec { return slices.Clone(r.specs) }

func (r *fakeRegistry) Action(name string) (workflow.ActionSpec, bool) {
	for _, s := range r.specs {
		if s.Name == name {
			return s, true
		}
	}
	return workflow.ActionSpec{}, false
}

func (r *fakeRegistry) ValidateParameters(name string, params map[string]any) []string {
	spec, ok := r.Action(name)
	if !ok {
		return []string{"/: unknown action " + name}
	}
	var schema struct {
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(spec.Parameters, &schema); err != nil {
		return []string{"/: " + err.Error()}
	}
	var lines []string
	for _, req := range schema.Required {
		if _, ok := params[req]; !ok {
			lines = append(lines, fmt.Sprintf("/%s: missing required property", req))
		}
	}
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p, ok := schema.Properties[k]
		if !ok {
			lines = append(lines, fmt.Sprintf("/%s: additional property not allowed", k))
			continue
		}
		switch v := params[k]; p.Type {
		case "string":
			if _, ok := v.(string); !ok {
				lines = append(lines, fmt.Sprintf("/%s: got %T, want string", k, v))
			}
		case "number":
			if _, ok := v.(float64); !ok {
				lines = append(lines, fmt.Sprintf("/%s: got %T, want number", k, v))
			}
		}
	}
	return lines
}

func (r *fakeRegistry) Execute(_ context.Context, call workflow.ActionCall) (workflow.ActionResult, error) {
	return workflow.ActionResult{}, fmt.Errorf("fakeRegistry does not execute %s", call.Action)
}

func (r *fakeRegistry) Connections(userID string) []workflow.Connection {
	return slices.Clone(r.conns[userID])
}

func newRegistry() *fakeRegistry {
	return &fakeRegistry{
		specs: []workflow.ActionSpec{
			{Name: "ai.process", Description: "Summarise, translate or transform text with the language model.", Effect: workflow.EffectRead,
				Documents: workflow.DocumentsOptional,
				Parameters: json.RawMessage(`{"type":"object","properties":{"instruction":{"type":"string","description":"What to do with the input."},` +
					`"language":{"type":"string"},"maxWords":{"type":"number"}},"required":["instruction"],"additionalProperties":false}`)},
			{Name: "crm.lookup", Description: "Find a customer record in the CRM.", Effect: workflow.EffectRead,
				ConnectionKind: "crm", ConnectionRequired: true,
				Parameters: json.RawMessage(`{"type":"object","properties":{"customer":{"type":"string","description":"Customer name or id."}},"required":["customer"],"additionalProperties":false}`)},
			{Name: "document.extract", Description: "Extract the text of documents.", Effect: workflow.EffectRead,
				Documents:  workflow.DocumentsRequired,
				Parameters: json.RawMessage(`{"type":"object","properties":{"pages":{"type":"string"}},"additionalProperties":false}`)},
			{Name: workflow.CompleteAction, Description: "Finish the round with a final answer to the user.", Effect: workflow.EffectRead,
				Parameters: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string","description":"The final answer."}},"required":["message"],"additionalProperties":false}`)},
		},
		conns: map[string][]workflow.Connection{
			"u1": {{Label: "crm-prod", Kind: "crm", Description: "Production CRM"}, {Label: "erp-test", Kind: "erp", Description: "ERP test system"}},
			"u2": {{Label: "bank", Kind: "bank", Description: "Someone else's bank"}},
		},
	}
}

var fixtureTime = time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)

func doc(id, msg, name, mime string, size int64) workflow.Document {
	return workflow.Document{ID: id, WorkflowID: "wf_a", MessageID: msg, Name: name, MimeType: mime, Size: size}
}

// twoRounds is workflow wf_a after one finished round and two steps of a
// second: uploads, an action with outputs, a final answer, a lookup and a
// failed step.
func twoRounds() (*workflow.Workflow, []workflow.Message) {
	wf := &workflow.Workflow{ID: "wf_a", UserID: "u1", Mode: workflow.ModeReact, Status: workflow.StatusRunning, Round: 2, Step: 3, MaxSteps: 10}
	msgs := []workflow.Message{
		{ID: "msg_r1u", Seq: 1, Round: 1, Role: workflow.RoleUser, Text: "Summarise the attached contract for me.",
			DocumentsLabel: "round1_user_context", Documents: []workflow.Document{
				doc("doc_contract", "msg_r1u", "contract.pdf", "application/pdf", 48213),
				doc("doc_annex", "msg_r1u", "annex A.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", 9120),
			}},
		{ID: "msg_r1a1", Seq: 2, Round: 1, Step: 1, Role: workflow.RoleAction, Action: "document.extract",
			ActionObjective: "Extract the contract's text", Status: workflow.MessageSuccess,
			DocumentsLabel: "round1_step1_document_extract", Documents: []workflow.Document{doc("doc_text", "msg_r1a1", "contract.txt", "text/plain", 20480)},
			Summary:  "document.extract succeeded; 1 document (contract.txt) as round1_step1_document_extract; result: Extracted 12 pages.",
			Findings: "Extracted 12 pages.", Learnings: []string{"The contract is 12 pages long."}},
		{ID: "msg_r1s", Seq: 3, Round: 1, Step: 2, Role: workflow.RoleAssistant, Text: "The contract runs for 3 years with a 90-day notice period."},
		{ID: "msg_r2u", Seq: 4, Round: 2, Role: workflow.RoleUser, Text: "Now look up the customer ACME in the CRM."},
		{ID: "msg_r2a1", Seq: 5, Round: 2, Step: 1, Role: workflow.RoleAction, Action: "crm.lookup",
			ActionObjective: "Find ACME's record", Status: workflow.MessageSuccess,
			Summary: "crm.lookup succeeded; result: ACME Corp, id 4711, account manager J. Doe", Findings: "ACME Corp, id 4711, account manager J. Doe",
			Learnings: []string{"ACME's CRM id is 4711."}},
		{ID: "msg_r2a2", Seq: 6, Round: 2, Step: 2, Role: workflow.RoleAction, Status: workflow.MessageError,
			Summary: `step failed: Stage 1 rejected 3 times: action "crm.find" is not a registered action`},
	}
	for i := range msgs {
		msgs[i].WorkflowID = "wf_a"
		msgs[i].CreatedAt = fixtureTime.Add(time.Duration(i) * time.Minute)
	}
	return wf, msgs
}
