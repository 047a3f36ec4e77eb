package actions

import (
	"context"

	"github.com/twostep/twostep/workflow"
)

// Names of the built-in actions. Other programs depend on them: keep them.
const (
	AIProcessAction   = "ai.process"
	ExtractAction     = "document.extract"
	GenerateAction    = "document.generate"
	HTTPRequestAction = "http.request"
)

// builtinNames returns the names every configured HTTP action must avoid.
func builtinNames() []string {
	return []string{AIProcessAction, ExtractAction, GenerateAction, HTTPRequestAction, workflow.CompleteAction}
}

// builtins returns the built-in actions; ai.process only when a model is set.
func (r *Registry) builtins() []action {
	list := []action{
		{
			spec: workflow.ActionSpec{
				Name: ExtractAction,
				Description: "Extract the text of the input documents (plain text, Markdown, CSV, JSON, HTML, PDF), " +
					"one text document per input, as plain text or Markdown.",
				Effect: workflow.EffectRead, Documents: workflow.DocumentsRequired,
			},
			schema: mustCompileSchema(ExtractAction, `{
				"type": "object",
				"properties": {
					"format": {"type": "string", "enum": ["text", "markdown"], "description": "output format, default text"}
				},
				"additionalProperties": false
			}`),
			run: r.runExtract,
		},
		{
			spec: workflow.ActionSpec{
				Name:        GenerateAction,
				Description: "Create one document with the given file name and content (text, Markdown, CSV, JSON, HTML...).",
				Effect:      workflow.EffectRead, Documents: workflow.DocumentsNone,
			},
			schema: mustCompileSchema(GenerateAction, `{
				"type": "object",
				"properties": {
					"fileName": {"type": "string", "minLength": 1, "maxLength": 200, "description": "file name with extension, e.g. report.md"},
					"content": {"type": "string", "description": "the document's full text"},
					"mimeType": {"type": "string", "description": "MIME type; default from the file extension"}
				},
				"required": ["fileName", "content"],
				"additionalProperties": false
			}`),
			check: r.checkGenerate,
			run:   r.runGenerate,
		},
		{
			spec: workflow.ActionSpec{
				Name: HTTPRequestAction,
				Description: "Call the HTTP API of one of the user's connections: a method and a path under the " +
					"connection's base URL; the response becomes a document. Any method but GET changes data.",
				Effect: workflow.EffectWrite, Documents: workflow.DocumentsNone,
				ConnectionKind: KindHTTP, ConnectionRequired: true,
			},
			schema: mustCompileSchema(HTTPRequestAction, `{
				"type": "object",
				"properties": {
					"method": {"type": "string", "enum": ["GET", "POST", "PUT", "PATCH", "DELETE"], "description": "default GET"},
					"path": {"type": "string", "minLength": 1, "maxLength": 2000, "description": "path relative to the connection's base URL, e.g. /customers/42"},
					"query": {"type": "object", "additionalProperties": {"type": ["string", "number", "boolean"]}, "description": "query parameters"},
					"body": {"type": ["string", "object"], "description": "request body: an object is sent as JSON"}
				},
				"required": ["path"],
				"additionalProperties": false
			}`),
			check: checkHTTPRequest,
			run:   r.runHTTPRequest,
		},
		{
			spec: workflow.ActionSpec{
				Name:        workflow.CompleteAction,
				Description: "End the round with a final answer to the user.",
				Effect:      workflow.EffectRead, Documents: workflow.DocumentsNone,
			},
			schema: mustCompileSchema(workflow.CompleteAction, `{
				"type": "object",
				"properties": {
					"message": {"type": "string", "minLength": 1, "description": "the final answer to the user"}
				},
				"required": ["message"],
				"additionalProperties": false
			}`),
			run: runComplete,
		},
	}
	if r.model != nil {
		list = append(list, r.aiProcess())
	}
	for i := range list {
		list[i].spec.Parameters = list[i].schema.raw
	}
	return list
}

// runComplete refuses to run: the engine ends the round itself when the
// model chooses workflow.complete, and never executes it.
func runComplete(context.Context, invocation) (workflow.ActionResult, error) {
	return workflow.ActionResult{}, workflow.Errorf(workflow.KindInvalid,
		"%s is handled by the engine and cannot be executed", workflow.CompleteAction)
}
