package wiring

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"

	"github.com/twostep/twostep/llm"
	"github.com/twostep/twostep/llm/scripted"
	"github.com/twostep/twostep/prompts"
	"github.com/twostep/twostep/workflow"
)

// newOfflineModel returns what LLM_PROVIDER=scripted serves with: a
// deterministic stand-in for a model, so the API, the engine, the actions
// and the admin page can be tried with no provider at all, in both modes.
// Each round it extracts the round's uploads (when there are any), runs
// the @act lines of the user's prompts (React mode, offline_act.go) and
// then completes with the last step's summary; in the action-plan mode it
// plans the extraction and the answer. It keeps nothing between calls, not
// even the calls.
func newOfflineModel() *scripted.Model {
	return &scripted.Model{Model: "offline", Forget: true, Reply: offlineReply}
}

// offlineReply answers one call by its stage, as the request says it.
func offlineReply(_ int, req workflow.ModelRequest) (string, error) {
	prompt := scripted.Call{ModelRequest: req}.Text()
	switch req.Stage {
	case workflow.StageOne:
		if roundUploads(prompt) == "" {
			if d, ok := pendingDirective(req); ok {
				return actSelection(d), nil
			}
		}
		return offlineSelect(prompt), nil
	case workflow.StageTwo:
		if params, ok := actParameters(req); ok {
			return mustJSON(map[string]any{"schema": prompts.ParametersSchemaID, "parameters": params}), nil
		}
		return offlineParameters(req.Output, prompt), nil
	case workflow.StagePlan, workflow.StageRepair:
		return offlinePlan(prompt), nil
	case workflow.StageCompact:
		return offlineCompact(prompt), nil
	}
	return "The offline scripted model does not write text; configure LLM_PROVIDER for real answers.", nil
}

var (
	// newestHistory is the first (newest) entry of WORKFLOW_HISTORY.
	newestHistory = regexp.MustCompile(`(?m)^# Workflow history \(newest first\)\n- \[round (\d+)(?:, step \d+)?\] (\w+)`)
	newestSummary = regexp.MustCompile(`(?m)^  summary: (.*)$`)
	// paramsContext is Stage 2's context: up to the next section, or the
	// end (a native-mode prompt has no schema section after it).
	paramsContext = regexp.MustCompile(`(?s)# Parameters context\n(.*?)(?:\n\n# |\z)`)
)

// offlineCompact summarises the entries of a compaction prompt by their
// summary lines, after the previous summary.
func offlineCompact(prompt string) string {
	var parts []string
	if _, prev, ok := strings.Cut(prompt, "# Previous summary\n"); ok {
		if prev, _, _ = strings.Cut(prev, "\n\n"); prev != "(none)" {
			parts = append(parts, prev)
		}
	}
	if _, entries, ok := strings.Cut(prompt, "# Entries leaving the history (oldest first)\n"); ok {
		for _, m := range newestSummary.FindAllStringSubmatch(entries, -1) {
			parts = append(parts, m[1])
		}
	}
	if len(parts) == 0 {
		return "Earlier steps ran; the offline model keeps no details."
	}
	return strings.Join(parts, "; ")
}

// offlineSelect extracts the round's uploads when no step has run yet in
// this round, else completes.
func offlineSelect(prompt string) string {
	if ref := roundUploads(prompt); ref != "" {
		return mustJSON(selection("document.extract", "Read the text of the uploaded documents",
			[]string{ref}, "op=extract", field("format", "enum", false, "text")))
	}
	done := "Nothing needed doing."
	if s := newestSummary.FindStringSubmatch(prompt); s != nil {
		done = "Done: " + s[1]
	}
	return mustJSON(selection(workflow.CompleteAction, "Answer the user", nil, done,
		field("message", "string", true, "the final answer")))
}

// roundUploads returns the reference of the current round's uploads ("" when
// the round has none): the round is the newest history entry's.
func roundUploads(prompt string) string {
	m := newestHistory.FindStringSubmatch(prompt)
	if m == nil || m[2] != "user" {
		return ""
	}
	round, _ := strconv.Atoi(m[1]) // the pattern matched digits
	label := workflow.UserLabel(round)
	for _, ref := range docListRef.FindAllString(prompt, -1) {
		if strings.HasSuffix(ref, ":"+label) {
			return ref
		}
	}
	return ""
}

// offlinePlan plans the extraction of the round's uploads and leaves the
// answer to the mode (the list of what the steps did); a round with no
// upload is planned as an immediate answer.
func offlinePlan(prompt string) string {
	if ref := roundUploads(prompt); ref != "" {
		return mustJSON([]map[string]any{{"action": "document.extract",
			"parameters": map[string]any{"documentList": []string{ref}, "format": "text"}, "resultLabel": "uploads_text"}})
	}
	return mustJSON([]map[string]any{{"action": workflow.CompleteAction,
		"parameters": map[string]any{"message": "(offline scripted model) Nothing needed doing."}, "resultLabel": "done"}})
}

// offlineParameters fills the parameters the Stage 2 output schema asks
// for: the extraction's format, else the answer, from the Stage 1 context.
func offlineParameters(out *workflow.OutputSchema, prompt string) string {
	params := map[string]any{}
	if asks(out, "format") {
		params["format"] = "text"
	} else {
		ctx := ""
		if m := paramsContext.FindStringSubmatch(prompt); m != nil {
			ctx = strings.TrimSpace(m[1])
		}
		params["message"] = "(offline scripted model) " + ctx
	}
	return mustJSON(map[string]any{"schema": prompts.ParametersSchemaID, "parameters": params})
}

// asks reports whether a Stage 2 output schema has the parameter name.
func asks(out *workflow.OutputSchema, name string) bool {
	if out == nil {
		return false
	}
	var schema struct {
		Properties struct {
			Parameters struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"parameters"`
		} `json:"properties"`
	}
	if json.Unmarshal(out.Schema, &schema) != nil {
		return false
	}
	_, ok := schema.Properties.Parameters.Properties[name]
	return ok
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
