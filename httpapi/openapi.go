package httpapi

import (
	"net/http"
	"strconv"

	"github.com/danielgtaylor/huma/v2"
)

// completeOpenAPI makes the generated document say what the handlers
// really send where huma's reflection cannot know it: raw document bytes,
// the event stream, null-able objects behind a $ref, 415 for request
// bodies, 422 for a bad query on every route, and the relative server. TestOpenAPIDescribesEveryResponse
// (cmd/gateway) checks every route's real responses against the result.
func completeOpenAPI(oapi *huma.OpenAPI) {
	oapi.Servers = []*huma.Server{{URL: "/", Description: "The gateway serving this document"}}
	oapi.Info.Description += "\n\nErrors are RFC 9457 `application/problem+json` documents. A path asked with a " +
		"method it does not offer answers 405 with such a document; unknown paths answer 404."

	// The admin view's checkpoint is null while no round runs;
	// CheckpointView is used nowhere else, so the component itself admits
	// null.
	if s := oapi.Components.Schemas.Map()["CheckpointView"]; s != nil {
		s.Nullable = true
	}

	for _, item := range oapi.Paths {
		for _, op := range []*huma.Operation{item.Get, item.Post, item.Delete} {
			if op == nil {
				continue
			}
			// Every route refuses a malformed query string and (huma's
			// RejectUnknownQueryParameters) an unknown parameter.
			addProblem(op, http.StatusUnprocessableEntity, "A query parameter is malformed, unknown or invalid")
			if op.RequestBody != nil {
				addProblem(op, http.StatusUnsupportedMediaType, "The body is not application/json")
				addProblem(op, http.StatusServiceUnavailable, "Too many request bodies in flight (limits.maxInflightUploadBytes); retry after Retry-After")
			}
			if op.OperationID == "createWorkflow" || op.OperationID == "startRound" || op.OperationID == "decideApproval" {
				for code, r := range op.Responses {
					if code == "201" || code == "202" {
						op.Responses["200"] = &huma.Response{
							Description: "With Prefer: wait, the round ended or paused in time: the workflow and the round's messages",
							Headers:     map[string]*huma.Param{"Preference-Applied": {Description: "wait", Schema: &huma.Schema{Type: "string"}}},
							Content:     r.Content,
						}
						break
					}
				}
			}
			switch {
			case op.OperationID == "getDocument":
				op.Responses["200"] = &huma.Response{
					Description: "The document's bytes, with the Content-Type it was stored with, as an attachment",
					Headers: map[string]*huma.Param{
						"Content-Disposition": {Description: "attachment; filename=...", Schema: &huma.Schema{Type: "string"}},
					},
					// Declared binary so generated clients read a blob (an
					// openapi-fetch call passes parseAs: "blob"), never JSON;
					// */* because the Content-Type is the stored one.
					Content: map[string]*huma.MediaType{
						"application/octet-stream": {Schema: &huma.Schema{Type: "string", Format: "binary"}},
						"*/*":                      {Schema: &huma.Schema{Type: "string", Format: "binary"}},
					},
				}
			case op.OperationID == "workflowEvents" || op.OperationID == "adminWorkflowEvents":
				op.Responses["200"] = &huma.Response{
					Description: "A text/event-stream of `message` events (id: the message's seq) and `status` events " +
						"(the workflow), ending after the status of a workflow that no longer runs",
					Content: map[string]*huma.MediaType{"text/event-stream": {Schema: eventStreamSchema()}},
				}
			}
		}
	}
	documentIdempotency(oapi)
	completeForClients(oapi)
}

// eventStreamSchema describes the frames of a workflow's event stream the
// way huma's sse package does: an array of events, each one of the named
// events with its typed data.
func eventStreamSchema() *huma.Schema {
	event := func(name, doc string, data *huma.Schema, withID bool) *huma.Schema {
		props := map[string]*huma.Schema{
			"event": {Type: "string", Description: "The event type", Extensions: map[string]any{"const": name}},
			"data":  data,
		}
		if withID {
			props["id"] = &huma.Schema{Type: "integer", Description: "The message's seq; send it back as Last-Event-ID to resume"}
		}
		return &huma.Schema{Type: "object", Title: "Event " + name, Description: doc, Properties: props, Required: []string{"event", "data"}}
	}
	ref := func(name string) *huma.Schema { return &huma.Schema{Ref: "#/components/schemas/" + name} }
	return &huma.Schema{
		Type: "array", Title: "Server Sent Events",
		Description: "Each item is one event frame: `event:` its type, `data:` its JSON, `id:` on message events",
		Items: &huma.Schema{OneOf: []*huma.Schema{
			event("message", "A committed message", ref("MessageView"), true),
			event("status", "The workflow after a change", ref("WorkflowView"), false),
			event("approval", "The approval a paused round waits on (after its status event)", ref("PendingApproval"), false),
			event("deleted", "The workflow was deleted; the stream ends", &huma.Schema{
				Type: "object", Properties: map[string]*huma.Schema{"id": {Type: "string"}}, Required: []string{"id"},
			}, false),
		}},
	}
}

// addProblem declares status on op with the shared problem schema, unless
// it is declared already.
func addProblem(op *huma.Operation, status int, description string) {
	key := strconv.Itoa(status)
	if _, ok := op.Responses[key]; ok {
		return
	}
	var errSchema *huma.Schema
	for _, r := range op.Responses {
		if mt := r.Content["application/problem+json"]; mt != nil {
			errSchema = mt.Schema
			break
		}
	}
	if errSchema == nil {
		return
	}
	op.Responses[key] = &huma.Response{
		Description: description,
		Content:     map[string]*huma.MediaType{"application/problem+json": {Schema: errSchema}},
	}
}
