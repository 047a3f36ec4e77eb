package apiv1

// ForkBody is the body of POST /api/v1/workflows/{id}/fork (DESIGN §10.4):
// a fork at step Step of round Round. With Selection the fork's step
// starts at Stage 2; with Parameters (for Selection, or else the selection
// the original recorded at that step) at execution; with neither it runs
// the step again.
type ForkBody struct {
	Round      int            `json:"round" minimum:"1" doc:"The round of the step to fork at"`
	Step       int            `json:"step" minimum:"1" doc:"The step to fork at: the fork holds every message before it and runs it again"`
	Selection  *ForkSelection `json:"selection,omitempty" doc:"An edited Stage 1 selection, judged as a live Stage 1 reply in the fork: the step starts at Stage 2 with it"`
	Parameters map[string]any `json:"parameters,omitempty" doc:"Edited Stage 2 parameters for the selection (this one, or the one the original recorded at that step), judged as a live Stage 2 reply: the step starts at execution with them (approvals still apply)"`
}

// ForkSelection is an edited Stage 1 selection: the fields of a Stage 1
// reply (DESIGN §3) but learnings.
type ForkSelection struct {
	Action                 string               `json:"action" minLength:"1" doc:"The action to run (method.action)"`
	ActionObjective        string               `json:"actionObjective,omitempty"`
	RequiredInputDocuments []string             `json:"requiredInputDocuments,omitempty" doc:"docList:/docItem: references, resolved in the fork"`
	RequiredConnection     string               `json:"requiredConnection,omitempty" doc:"A connection label of the caller's"`
	ParametersContext      string               `json:"parametersContext,omitempty" doc:"What Stage 2 reads"`
	ParametersSchema       ForkParametersSchema `json:"parametersSchema,omitempty"`
}

// ForkParametersSchema lists the parameters a selection asks Stage 2 for.
type ForkParametersSchema struct {
	Fields []ForkField `json:"fields,omitempty"`
}

// ForkField is one parameter a selection asks Stage 2 to fill.
type ForkField struct {
	Name        string `json:"name" minLength:"1"`
	Type        string `json:"type,omitempty" doc:"string, number, integer, boolean, enum, object or array; left out (or not judged) for a parameter the action registers, whose type is the action's"`
	Items       string `json:"items,omitempty" doc:"For an array parameter the action does not register: its element type (string, number, integer, boolean or object)"`
	Required    bool   `json:"required,omitempty"`
	Description string `json:"description,omitempty"`
}
