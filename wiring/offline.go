package wiring

import (
	"encoding/json"
	"strings"

	"github.com/twostep/twostep/llm"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/textclip"
	"github.com/twostep/twostep/workflow"
)

// newOfflineModel returns what LLM_PROVIDER=scripted serves with: a
// deterministic stand-in for a model, so the API, the engine, the actions
// and the admin page can be tried with no provider at all, in both modes.
// Each round it extracts the round's uploads (when there are any), runs
// the @act lines of the user's prompts (React mode, offline_act.go) and
// then completes with the last step's summary; in the action-plan mode it
// plans the extraction and the answer. It never reads the prompt: it
// decides from the request's stage, output schema and facts
// (workflow.PromptFacts), so no template wording can change its answers.
// It keeps nothing between calls, not even the calls.
func newOfflineModel() *scripted.Model {
	return &scripted.Model{Model: "offline", Forget: true, Reply: offlineReply}
}

// offlineReply answers one call by its stage, from the request's facts.
func offlineReply(_ int, req workflow.ModelRequest) (string, error) {
	facts := req.Facts
	switch req.Stage {
	case workflow.StageOne:
		ref := roundUploads(facts.Messages)
		if ref == "" {
			if d, ok := pendingDirective(facts.Messages); ok {
				return actSelection(d), nil
			}
		}
		return offlineSelect(ref, facts.Messages), nil
	case workflow.StageTwo:
		if params, ok := actParameters(req); ok {
			return mustJSON(map[string]any{"schema": prompts.ParametersSchemaID, "parameters": params}), nil
		}
		return offlineParameters(req.Output, facts.Selection), nil
	case workflow.StagePlan, workflow.StageRepair:
		return offlinePlan(roundUploads(facts.Messages)), nil
	case workflow.StageCompact:
		return offlineCompact(facts.Previous, facts.Compacted), nil
	}
	return "The offline scripted model does not write text; configure LLM_PROVIDER for real answers.", nil
}

// offlineCompact summarises the entries leaving the history by their
// steps' summaries, after the previous summary.
func offlineCompact(previous *workflow.Message, entries []workflow.Message) string {
	var parts []string
	if previous != nil && previous.Text != "" {
		parts = append(parts, previous.Text)
	}
	for _, m := range entries {
		if s := textclip.OneLine(m.Summary); m.Role == workflow.RoleAction && s != "" {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return "Earlier steps ran; the offline model keeps no details."
	}
	return strings.Join(parts, "; ")
}

// offlineSelect extracts the round's uploads (ref, "" for none), else
// completes with the newest step's summary.
func offlineSelect(ref string, msgs []workflow.Message) string {
	if ref != "" {
		return mustJSON(selection("document.extract", "Read the text of the uploaded documents",
			[]string{ref}, "op=extract", field("format", "enum", false, "text")))
	}
	done := "Nothing needed doing."
	if s := newestSummary(msgs); s != "" {
		done = "Done: " + s
	}
	return mustJSON(selection(workflow.CompleteAction, "Answer the user", nil, done,
		field("message", "string", true, "the final answer")))
}

// newestSummary is the summary of the newest step that has one, on one
// line; "" when no step has.
func newestSummary(msgs []workflow.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if m := &msgs[i]; m.Role == workflow.RoleAction && m.Summary != "" {
			return textclip.OneLine(m.Summary)
		}
	}
	return ""
}

// roundUploads returns the reference of the current round's uploads: the
// documents of the newest message when it is the round's user message (no
// step has run in the round yet); "" otherwise.
func roundUploads(msgs []workflow.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := &msgs[i]
		if m.Role == workflow.RoleSummary {
			continue // a compaction's summary is no step
		}
		if m.Role != workflow.RoleUser || len(m.Documents) == 0 {
			return ""
		}
		return workflow.Reference{Kind: workflow.RefDocList, MessageID: m.ID, Label: m.DocumentsLabel}.String()
	}
	return ""
}

// offlinePlan plans the extraction of the round's uploads (ref) and leaves
// the answer to the mode (the list of what the steps did); a round with no
// upload is planned as an immediate answer.
func offlinePlan(ref string) string {
	if ref != "" {
		return mustJSON([]map[string]any{{"action": "document.extract",
			"parameters": map[string]any{"documentList": []string{ref}, "format": "text"}, "resultLabel": "uploads_text"}})
	}
	return mustJSON([]map[string]any{{"action": workflow.CompleteAction,
		"parameters": map[string]any{"message": "(offline scripted model) Nothing needed doing."}, "resultLabel": "done"}})
}

// offlineParameters fills the parameters the Stage 2 output schema asks
// for: the extraction's format, else the answer, from the Stage 1
// selection's parameters context.
func offlineParameters(out *workflow.OutputSchema, sel *workflow.Selection) string {
	params := map[string]any{}
	if _, ok := askedParams(out).Properties["format"]; ok {
		params["format"] = "text"
	} else {
		ctx := ""
		if sel != nil {
			ctx = strings.TrimSpace(sel.ParametersContext)
		}
		params["message"] = "(offline scripted model) " + ctx
	}
	return mustJSON(map[string]any{"schema": prompts.ParametersSchemaID, "parameters": params})
}

// askedParams reads the parameter schema a Stage 2 output schema asks
// for (its "parameters" property) with workflow.ReadActionSchema; empty
// when out is nil or does not decode.
func askedParams(out *workflow.OutputSchema) workflow.ActionSchema {
	if out == nil {
		return workflow.ActionSchema{}
	}
	var schema struct {
		Properties struct {
			Parameters json.RawMessage `json:"parameters"`
		} `json:"properties"`
	}
	if json.Unmarshal(out.Schema, &schema) != nil {
		return workflow.ActionSchema{}
	}
	s, _ := workflow.ReadActionSchema(schema.Properties.Parameters)
	return s
}

// mustJSON marshals the maps of strings and slices built here, which
// cannot fail.
func mustJSON(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}

// OfflineHint is the start-up warning of a gateway given no model at all
// (no LLM_PROVIDER, no provider setting, no models section): it talks to
// Ollama on localhost by default, and a newcomer without Ollama should
// learn at once how to run offline. "" when a model is configured.
func (c *Config) OfflineHint() string {
	if c.LLMProvider != "" || c.LLM().SelectedProvider() != llm.ProviderOllama || c.OllamaBaseURL != "" || c.LLMModel != "" || c.routed() {
		return ""
	}
	return "no model configured: using Ollama at http://localhost:11434; to try the gateway with no provider, " +
		"start it with LLM_PROVIDER=scripted (an offline model that runs the @act lines of a prompt, README), " +
		"or set LLM_PROVIDER / OPENAI_BASE_URL / ANTHROPIC_API_KEY / GOOGLE_API_KEY"
}
