package httpapi

import (
	"slices"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/twostep/twostep/workflow"
)

// This file makes the OpenAPI document good input for client generators
// (openapi-typescript + openapi-fetch, oapi-codegen) and linters (Spectral,
// Redocly): arrays the server always sends are not nullable, each fixed set
// of values is one named enum, errors list the fields they always carry,
// every operation has a description and a declared tag. test/clients_test.go
// generates both clients from the document and runs them against the
// gateway.

// namedEnum is a set of values that gets one component schema, so a
// generated client has one type for it wherever it appears.
type namedEnum struct {
	name, doc string
	values    []string
	// props are the "Schema.property" places that hold it without an
	// inline enum; a response property whose inline enum has exactly these
	// values is replaced too.
	props []string
}

func namedEnums() []namedEnum {
	return []namedEnum{
		{name: "WorkflowStatus", doc: "A workflow's status: running, paused for an approval, or ended (completed, failed, stopped)",
			values: strs(workflow.StatusRunning, workflow.StatusAwaitingApproval, workflow.StatusCompleted, workflow.StatusFailed, workflow.StatusStopped)},
		{name: "WorkflowMode", doc: "How a workflow's rounds run: react (two stages per step) or actionplan (the whole plan in one call)",
			values: strs(workflow.ModeReact, workflow.ModeActionPlan)},
		{name: "StopReason", doc: "Why the last round ended; empty while a round runs or waits for an approval",
			values: strs("", workflow.StopCompleted, workflow.StopMaxSteps, workflow.StopFailures, workflow.StopLLMError,
				workflow.StopStopped, workflow.StopPlanUnavailable, workflow.StopLoop, workflow.StopBudget),
			props: []string{"WorkflowView.stopReason", "WorkflowResult.stopReason", "AdminWorkflowView.stopReason"}},
		{name: "MessageStatus", doc: "The outcome of an action message; empty on other messages",
			values: strs("", workflow.MessageSuccess, workflow.MessageError, workflow.MessageRejected),
			props:  []string{"MessageView.status"}},
		{name: "Effect", doc: "Whether an action changes anything outside the workflow",
			values: strs(workflow.EffectRead, workflow.EffectWrite),
			props:  []string{"PendingApproval.effect"}},
		{name: "ApprovalKind", doc: "What an approval judges: call (the filled call) or intent (Stage 1's decision, before Stage 2)",
			values: strs(workflow.ApprovalCall, workflow.ApprovalIntent),
			props:  []string{"PendingApproval.kind", "StandingApprovalView.kind"}},
		{name: "Phase", doc: "The phase of the step a checkpoint holds: select → parameterize → execute → commit (plan and replan in the action-plan mode)",
			values: strs(workflow.PhaseSelect, workflow.PhaseParameterize, workflow.PhaseExecute, workflow.PhaseCommit,
				workflow.PhasePlan, workflow.PhaseReplan),
			props: []string{"CheckpointState.phase", "CheckpointView.phase"}},
	}
}

func strs[T ~string](vs ...T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

// tagDescriptions is the document's global tag list, in order.
func tagDescriptions() [][2]string {
	return [][2]string{
		{"workflows", "Create, list, read and delete workflows"},
		{"rounds", "Start, stop and resume a workflow's rounds"},
		{"approvals", "Decide the step a paused round waits on; list and revoke standing approvals"},
		{"messages", "A workflow's messages: prompts, action results, answers, summaries"},
		{"documents", "The bytes of a workflow's documents"},
		{"events", "Server-Sent Events of a workflow"},
		{"actions", "The actions Stage 1 may choose"},
		{"health", "Liveness and readiness probes"},
		{"admin", "Admin-only inspection, re-rendering and replay of every user's workflows (admin token)"},
	}
}

// opDescriptions describe the operations whose registration has only a
// summary; an operation in neither gets its summary as description.
func opDescriptions() map[string]string {
	return map[string]string{
		"createWorkflow": "Stores the workflow with the prompt and documents (base64) and starts its first round in the " +
			"background: 201 with the workflow and its `Location`. With `Prefer: wait=<seconds>` the answer waits " +
			"for the round to end or pause and is 200 with the round's messages.",
		"listWorkflows":  "A page of the caller's workflows, newest first; `nextCursor` fetches the next page.",
		"getWorkflow":    "The workflow with its status, stop reason, counters and, while paused, the pending approval.",
		"deleteWorkflow": "Deletes the workflow, its messages, documents and traces. A running round is stopped first.",
		"startRound":     "Adds the prompt (and documents) as a user message and starts a round; 409 while a round runs or waits for an approval.",
		"stopWorkflow":   "Stops the running round: the in-flight model call or action is cancelled and the workflow ends `stopped`.",
		"resumeWorkflow": "Continues a failed or stopped round from its last checkpoint, without repeating committed steps.",
		"listMessages":   "Every message of the workflow in seq order: user prompts, action results, assistant answers and history summaries.",
		"getDocument": "The stored bytes as an attachment with the Content-Type they were uploaded or produced with " +
			"(declared application/octet-stream: read the body as a blob, not as JSON).",
		"listActions": "The actions Stage 1 may choose, with their parameter schemas and effects.",
		"healthz":     "Answers 200 while the process serves requests; no dependency is checked.",
		"readyz": "200 while the store answers and a model is configured (status degraded when a model or an MCP server " +
			"does not answer its probe, see checks); 503 with Retry-After otherwise.",
		"adminListWorkflows":  "Every user's workflows (or one user's), newest first, with their checkpoints.",
		"adminGetWorkflow":    "Any user's workflow with the checkpoint of its current step.",
		"adminListMessages":   "Any user's workflow messages in seq order.",
		"adminListTraces":     "Every kept model call and action trace of a workflow, oldest first, secrets redacted.",
		"adminGetTrace":       "One trace: the rendered prompt, the raw reply, what was parsed and why it was rejected.",
		"adminListTemplates":  "The prompt templates the gateway renders with, with the placeholders each uses.",
		"adminListActions":    "Every registered action with its schema, as Stage 1 sees it.",
		"adminRender":         "Renders the prompt a stage would send now for the workflow, optionally with an edited template; no model is called.",
		"adminReplay":         "Sends a trace's prompt (or an edited one) to the model again and shows the reply and how it parses; nothing is stored.",
		"adminGetEconomy":     "What the workflow's model calls cost per step and stage.",
		"adminWorkflowEvents": "The event stream of any user's workflow, as /api/v1/workflows/{id}/events sends it.",
	}
}

// completeForClients applies this file's rules to oapi (see the top of the
// file). It replaces schemas rather than editing them where huma validates
// requests with them, so request validation is unchanged.
func completeForClients(oapi *huma.OpenAPI) {
	schemas := oapi.Components.Schemas.Map()
	responseOnly := responseOnlySchemas(oapi, schemas)

	for name := range responseOnly {
		for _, p := range schemas[name].Properties {
			if p.Type == "array" {
				// The server sends [] (or leaves an omitempty array out),
				// never null.
				p.Nullable = false
			}
		}
	}
	if em := schemas["ErrorModel"]; em != nil {
		// problemFields fills these in every problem the server sends.
		em.Required = []string{"type", "title", "status", "detail"}
	}
	if ed := schemas["ErrorDetail"]; ed != nil {
		ed.Required = []string{"message"} // problemFields fills it too
	}
	addNamedEnums(oapi, schemas, responseOnly)

	descriptions := opDescriptions()
	used := map[string]bool{}
	for _, item := range oapi.Paths {
		for _, op := range []*huma.Operation{item.Get, item.Post, item.Put, item.Patch, item.Delete} {
			if op == nil {
				continue
			}
			for _, t := range op.Tags {
				used[t] = true
			}
			if op.Description == "" {
				op.Description = descriptions[op.OperationID]
			}
			if op.Description == "" {
				op.Description = op.Summary
			}
		}
	}
	oapi.Tags = nil
	for _, td := range tagDescriptions() {
		if used[td[0]] {
			oapi.Tags = append(oapi.Tags, &huma.Tag{Name: td[0], Description: td[1]})
			delete(used, td[0])
		}
	}
	rest := make([]string, 0, len(used))
	for t := range used {
		rest = append(rest, t)
	}
	slices.Sort(rest)
	for _, t := range rest {
		oapi.Tags = append(oapi.Tags, &huma.Tag{Name: t, Description: "Operations tagged " + t})
	}
}

// addNamedEnums adds each named enum as a component and points its places
// at it: the listed properties, response properties with the same inline
// enum, and query parameters with the same inline enum.
func addNamedEnums(oapi *huma.OpenAPI, schemas map[string]*huma.Schema, responseOnly map[string]bool) {
	for _, e := range namedEnums() {
		values := make([]any, len(e.values))
		for i, v := range e.values {
			values[i] = v
		}
		schemas[e.name] = &huma.Schema{Type: "string", Description: e.doc, Enum: values}
		ref := func(old *huma.Schema) *huma.Schema {
			return &huma.Schema{Ref: "#/components/schemas/" + e.name, Description: old.Description}
		}
		for name := range responseOnly {
			s := schemas[name]
			for prop, p := range s.Properties {
				if slices.Contains(e.props, name+"."+prop) || sameEnum(p.Enum, e.values) {
					s.Properties[prop] = ref(p)
				}
			}
		}
		for _, item := range oapi.Paths {
			for _, op := range []*huma.Operation{item.Get, item.Post, item.Put, item.Patch, item.Delete} {
				if op == nil {
					continue
				}
				for _, p := range op.Parameters {
					if p.Schema != nil && sameEnum(p.Schema.Enum, e.values) {
						p.Schema = ref(p.Schema)
					}
				}
			}
		}
	}
}

func sameEnum(enum []any, values []string) bool {
	if len(enum) != len(values) {
		return false
	}
	for _, v := range enum {
		s, ok := v.(string)
		if !ok || !slices.Contains(values, s) {
			return false
		}
	}
	return true
}

// responseOnlySchemas names the component schemas that responses use and
// no request body or parameter does: the ones safe to describe as the
// server sends them.
func responseOnlySchemas(oapi *huma.OpenAPI, schemas map[string]*huma.Schema) map[string]bool {
	inResponses, inRequests := map[string]bool{}, map[string]bool{}
	for _, item := range oapi.Paths {
		for _, op := range []*huma.Operation{item.Get, item.Post, item.Put, item.Patch, item.Delete} {
			if op == nil {
				continue
			}
			for _, r := range op.Responses {
				for _, mt := range r.Content {
					reach(mt.Schema, schemas, inResponses)
				}
			}
			if op.RequestBody != nil {
				for _, mt := range op.RequestBody.Content {
					reach(mt.Schema, schemas, inRequests)
				}
			}
			for _, p := range op.Parameters {
				reach(p.Schema, schemas, inRequests)
			}
		}
	}
	for n := range inRequests {
		delete(inResponses, n)
	}
	return inResponses
}

// reach adds to seen every component schema s refers to, directly or
// through other schemas.
func reach(s *huma.Schema, schemas map[string]*huma.Schema, seen map[string]bool) {
	if s == nil {
		return
	}
	if name, ok := strings.CutPrefix(s.Ref, "#/components/schemas/"); ok {
		if seen[name] {
			return
		}
		seen[name] = true
		reach(schemas[name], schemas, seen)
		return
	}
	reach(s.Items, schemas, seen)
	if ap, ok := s.AdditionalProperties.(*huma.Schema); ok {
		reach(ap, schemas, seen)
	}
	for _, p := range s.Properties {
		reach(p, schemas, seen)
	}
	for _, group := range [][]*huma.Schema{s.OneOf, s.AnyOf, s.AllOf} {
		for _, c := range group {
			reach(c, schemas, seen)
		}
	}
}
