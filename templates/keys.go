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
	KeyValidationFeedback        = "VALIDATION_FEEDBACK"
	KeyActionObjective           = "ACTION_OBJECTIVE"
	KeySelectedAction            = "SELECTED_ACTION"
	KeyParametersContext         = "PARAMETERS_CONTEXT"
	KeyParametersSchema          = "PARAMETERS_SCHEMA"
	// KeyPreviousResponse is the unparseable reply the action-plan mode's
	// repair template shows back to the model.
	KeyPreviousResponse = "PREVIOUS_RESPONSE"
)

// The names of the built-in templates (file name without ".tmpl").
const (
	Stage1 = "stage1"
	Stage2 = "stage2"
	Plan   = "plan"
	Repair = "repair"
)

// KnownKeys returns every placeholder name a template may use, sorted.
func KnownKeys() []string {
	return []string{
		KeyActionObjective,
		KeyAvailableConnectionsIndex,
		KeyAvailableDocumentsIndex,
		KeyAvailableMethods,
		KeyParametersContext,
		KeyParametersSchema,
		KeyPreviousResponse,
		KeySelectedAction,
		KeyUserPrompt,
		KeyValidationFeedback,
		KeyWorkflowHistory,
	}
}

// AllowedKeys returns the placeholder names the template called name may
// use. The built-in stages are restricted to their DESIGN inputs, so an
// operator's override cannot, for example, put the user prompt or the
// history into Stage 2. Any other template name may use every known key.
func AllowedKeys(name string) []string {
	switch name {
	case Stage1:
		return []string{KeyUserPrompt, KeyAvailableMethods, KeyAvailableDocumentsIndex,
			KeyAvailableConnectionsIndex, KeyWorkflowHistory, KeyValidationFeedback}
	case Stage2:
		return []string{KeyActionObjective, KeySelectedAction, KeyParametersContext,
			KeyParametersSchema, KeyValidationFeedback}
	case Plan:
		return []string{KeyUserPrompt, KeyAvailableMethods, KeyAvailableDocumentsIndex,
			KeyAvailableConnectionsIndex, KeyWorkflowHistory, KeyValidationFeedback}
	case Repair:
		return []string{KeyPreviousResponse, KeyValidationFeedback, KeyAvailableMethods}
	}
	return KnownKeys()
}

// IsKnownKey reports whether name is one of KnownKeys.
func IsKnownKey(name string) bool {
	return slices.Contains(KnownKeys(), name)
}
