package templates

import "slices"

// The placeholder names of DESIGN §3–4. A template may name only these keys;
// any other name is an error when the template is parsed.
const (
	KeyUserPrompt                = "USER_PROMPT"
	KeyAvailableMethods          = "AVAILABLE_METHODS"
	KeyAvailableDocumentsIndex   = "AVAILABLE_DOCUMENTS_INDEX"
	KeyAvailableConnectionsIndex = "AVAILABLE_CONNECTIONS_INDEX"
	KeyWorkflowHistory           = "WORKFLOW_HISTORY"
	// KeyWorkflowHistorySealed and KeyWorkflowHistoryLatest are Stage 1's
	// history in its two sections (DESIGN §11.1): the sealed entries, one
	// line each, byte-identical from seal to seal, and the entries since
	// the last seal, in full. WORKFLOW_HISTORY is both as one list.
	KeyWorkflowHistorySealed = "WORKFLOW_HISTORY_SEALED"
	KeyWorkflowHistoryLatest = "WORKFLOW_HISTORY_LATEST"
	KeyValidationFeedback    = "VALIDATION_FEEDBACK"
	KeyActionObjective       = "ACTION_OBJECTIVE"
	KeySelectedAction        = "SELECTED_ACTION"
	KeyParametersContext     = "PARAMETERS_CONTEXT"
	KeyParametersSchema      = "PARAMETERS_SCHEMA"
	// KeyPreviousResponse is the unparseable reply the action-plan mode's
	// repair template shows back to the model.
	KeyPreviousResponse = "PREVIOUS_RESPONSE"
	// KeyPlanProgress is the action-plan mode's plan so far for the
	// re-planning call: each step with its outcome, the failure, the steps
	// not run yet.
	KeyPlanProgress = "PLAN_PROGRESS"
	// KeyPreviousSummary, KeyCompactedEntries and KeySummaryLimit are the
	// compaction call's inputs: the summary written by the last compaction
	// (or "(none)"), the history entries about to leave the history, oldest
	// first, and the most characters the summary may have.
	KeyPreviousSummary  = "PREVIOUS_SUMMARY"
	KeyCompactedEntries = "COMPACTED_ENTRIES"
	KeySummaryLimit     = "SUMMARY_LIMIT"
)

// The names of the built-in templates (file name without ".tmpl").
const (
	Stage1 = "stage1"
	// Stage1Single is Stage 1 with the history as one list
	// (WORKFLOW_HISTORY), rendered when limits.historyLayout is single.
	Stage1Single = "stage1_single"
	Stage2       = "stage2"
	Plan         = "plan"
	Repair       = "repair"
	// Replan is the action-plan mode's re-planning call after a failed
	// step; Compact is React mode's history compaction call.
	Replan  = "replan"
	Compact = "compact"
)

// KnownKeys returns every placeholder name a template may use, sorted.
func KnownKeys() []string {
	return []string{
		KeyActionObjective,
		KeyAvailableConnectionsIndex,
		KeyAvailableDocumentsIndex,
		KeyAvailableMethods,
		KeyCompactedEntries,
		KeyParametersContext,
		KeyParametersSchema,
		KeyPlanProgress,
		KeyPreviousResponse,
		KeyPreviousSummary,
		KeySelectedAction,
		KeySummaryLimit,
		KeyUserPrompt,
		KeyValidationFeedback,
		KeyWorkflowHistory,
		KeyWorkflowHistoryLatest,
		KeyWorkflowHistorySealed,
	}
}

// AllowedKeys returns the placeholder names the template called name may
// use. The built-in stages are restricted to their DESIGN inputs, so an
// operator's override cannot, for example, put the user prompt or the
// history into Stage 2. Any other template name may use every known key.
func AllowedKeys(name string) []string {
	switch name {
	case Stage1, Stage1Single:
		return []string{KeyUserPrompt, KeyAvailableMethods, KeyAvailableDocumentsIndex,
			KeyAvailableConnectionsIndex, KeyWorkflowHistory, KeyWorkflowHistorySealed,
			KeyWorkflowHistoryLatest, KeyValidationFeedback}
	case Stage2:
		return []string{KeyActionObjective, KeySelectedAction, KeyParametersContext,
			KeyParametersSchema, KeyValidationFeedback}
	case Plan:
		return []string{KeyUserPrompt, KeyAvailableMethods, KeyAvailableDocumentsIndex,
			KeyAvailableConnectionsIndex, KeyWorkflowHistory, KeyValidationFeedback}
	case Repair:
		return []string{KeyPreviousResponse, KeyValidationFeedback, KeyAvailableMethods}
	case Replan:
		return []string{KeyUserPrompt, KeyAvailableMethods, KeyAvailableDocumentsIndex,
			KeyAvailableConnectionsIndex, KeyWorkflowHistory, KeyPlanProgress}
	case Compact:
		// The compaction call sees the history it summarises and the
		// request it serves, nothing else: no methods, documents index or
		// connections.
		return []string{KeyUserPrompt, KeyPreviousSummary, KeyCompactedEntries, KeySummaryLimit}
	}
	return KnownKeys()
}

// IsKnownKey reports whether name is one of KnownKeys.
func IsKnownKey(name string) bool {
	return slices.Contains(KnownKeys(), name)
}
