package enginetest

import (
	"encoding/json"

	"github.com/twostep/twostep/workflow"
)

// Select returns a Stage 1 reply choosing action with every selection
// field set; fields are the parameter names Stage 1 asks for (all strings,
// required). docs are document references, conn a connection label.
func Select(action, objective string, docs []string, conn string, fields ...string) string {
	specs := make([]workflow.FieldSpec, 0, len(fields))
	for _, f := range fields {
		specs = append(specs, workflow.FieldSpec{Name: f, Type: "string", Required: true, Description: "the " + f})
	}
	var connection any
	if conn != "" {
		connection = conn
	}
	if docs == nil {
		docs = []string{}
	}
	return mustJSON(map[string]any{
		"action": action, "actionObjective": objective, "learnings": []string{"learned: " + objective},
		"requiredInputDocuments": docs, "requiredConnection": connection,
		"parametersContext": "context for " + objective,
		"parametersSchema":  map[string]any{"fields": specs},
	})
}

// Params returns a Stage 2 reply with the given parameters.
func Params(params map[string]any) string {
	return mustJSON(map[string]any{"schema": "parameters_v1", "parameters": params})
}

// Echoes returns the two replies of one step running Echo with text.
func Echoes(text string) []string {
	return []string{Select(Echo, "echo "+text, nil, "", "text"), Params(map[string]any{"text": text})}
}

// Completes returns the two replies of a step ending the round with message.
func Completes(message string) []string {
	return []string{Select(workflow.CompleteAction, "answer", nil, "", "message"), Params(map[string]any{"message": message})}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
